import { randomUUID } from 'node:crypto';
import { ident, sql, type ColumnarDb } from '@svcboot/entry-columnar';

/** What the API shows: `id` and `name`. created_at and updated_at stay in the table. */
export interface User {
  id: string;
  name: string;
}

const users = ident('users');

/**
 * Users in a ReplacingMergeTree keyed by `id`: every write (create, update, delete) inserts a
 * whole row with a larger `version`, a delete inserts a tombstone (`deleted = 1`), and every read
 * uses FINAL, which keeps only the highest version of each id. An INSERT is visible as soon as
 * it returns, so a read right after a write sees it (read-your-writes), without waiting for
 * background merges or asynchronous mutations (ALTER … UPDATE/DELETE are asynchronous).
 */
export class UserStore {
  private lastVersion = 0n;

  constructor(private readonly db: ColumnarDb) {}

  /** Creates the table when missing (the demo's schema migration). */
  async migrate(): Promise<void> {
    await this.db.command(sql`
      CREATE TABLE IF NOT EXISTS ${users} (
        id String,
        name String,
        created_at DateTime,
        updated_at DateTime,
        version UInt64,
        deleted UInt8
      ) ENGINE = ReplacingMergeTree(version) ORDER BY id`);
  }

  /** Live users, oldest first. */
  async list(): Promise<User[]> {
    // The filter on `deleted` sits outside FINAL: filtering before the merge of versions would
    // drop a tombstone and resurrect the row it hides.
    return this.db.query<User>(sql`
      SELECT id, name FROM (SELECT id, name, created_at, deleted FROM ${users} FINAL)
      WHERE deleted = 0 ORDER BY created_at, id`);
  }

  /** The user, or `{id: "", name: ""}` when there is none (the demo never answers 404: ARCHITECTURE.md §7). */
  async get(id: string): Promise<User> {
    const [row] = await this.db.query<User & { deleted: number }>(
      sql`SELECT id, name, deleted FROM ${users} FINAL WHERE id = ${id}`,
    );
    return row && row.deleted === 0 ? { id: row.id, name: row.name } : { id: '', name: '' };
  }

  async create(name: string): Promise<User> {
    const user = { id: randomUUID(), name };
    const now = new Date();
    await this.db.command(sql`
      INSERT INTO ${users} (id, name, created_at, updated_at, version, deleted)
      VALUES (${user.id}, ${name}, ${now}, ${now}, ${this.nextVersion()}, 0)`);
    return user;
  }

  /** Renames a live user; a missing or deleted id is left alone. Answers `{id, name}` either way. */
  async update(id: string, name: string): Promise<User> {
    await this.rewrite(id, name, 0);
    return { id, name };
  }

  /** Deletes a live user by inserting its tombstone; a missing id is left alone. */
  async remove(id: string): Promise<void> {
    await this.rewrite(id, undefined, 1);
  }

  /** One INSERT … SELECT: the new version is built from the current live row, if there is one. */
  private async rewrite(id: string, name: string | undefined, deleted: 0 | 1): Promise<void> {
    const newName = name === undefined ? sql`name` : sql`${name}`;
    await this.db.command(sql`
      INSERT INTO ${users} (id, name, created_at, updated_at, version, deleted)
      SELECT id, ${newName}, created_at, ${new Date()}, ${this.nextVersion()}, ${deleted}
      FROM (SELECT id, name, created_at, deleted FROM ${users} FINAL WHERE id = ${id})
      WHERE deleted = 0`);
  }

  /** Strictly increasing in this process: microseconds since the epoch, bumped on ties. */
  private nextVersion(): bigint {
    const now = BigInt(Date.now()) * 1000n;
    this.lastVersion = now > this.lastVersion ? now : this.lastVersion + 1n;
    return this.lastVersion;
  }
}
