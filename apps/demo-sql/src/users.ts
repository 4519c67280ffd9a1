import { sql, type Kysely } from 'kysely';
import type { Database, User } from './schema.js';

/** The user queries of the five routes (ARCHITECTURE.md §7). Soft-deleted rows are invisible to all of them; times are the database's. */
export class UserStore {
  constructor(private readonly db: Kysely<Database>) {}

  list(): Promise<User[]> {
    return this.db
      .selectFrom('users')
      .select(['id', 'name'])
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
  }

  get(id: number): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .select(['id', 'name'])
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  create(name: string): Promise<User> {
    return this.db
      .insertInto('users')
      .values({ name })
      .returning(['id', 'name'])
      .executeTakeFirstOrThrow();
  }

  /** Renames a live user; false when no row was updated. */
  async rename(id: number, name: string): Promise<boolean> {
    const res = await this.db
      .updateTable('users')
      .set({ name, updated_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Marks a live user deleted; false when no row was. */
  async softDelete(id: number): Promise<boolean> {
    const res = await this.db
      .updateTable('users')
      .set({ deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}
