import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@svcboot/testkit';
import { relationalDbEntry } from './index.js';
import { adminQuery, uniqueDatabase } from './test-support/pg.js';
import { relationalDbYaml } from './test-support/yaml.js';
import { sqlHarness } from './test-support/harness.js';
import { startPrivatePostgres, type PrivatePostgres } from '@svcboot/testkit';

const { setup } = sqlHarness();

interface Tables {
  item: { id: number; label: string };
}

async function one<T>(db: Kysely<unknown>, query: ReturnType<typeof sql<T>>): Promise<T> {
  return (await query.execute(db)).rows[0]!;
}

describe('params', () => {
  let tls: PrivatePostgres;
  let noTls: PrivatePostgres;
  beforeAll(async () => {
    [tls, noTls] = await Promise.all([startPrivatePostgres({ tls: true }), startPrivatePostgres()]);
  });
  afterAll(async () => {
    await Promise.all([tls?.remove(), noTls?.remove()]);
  });

  it('sets TimeZone per session, Asia/Shanghai by default', async () => {
    const name = uniqueDatabase('tz');
    const { app } = await setup(
      relationalDbYaml(
        { database: [{ name, autoCreate: true }] },
        { name: 'utc', database: [{ name, params: ['TimeZone=UTC'] }] },
      ),
      [name],
    );
    await app.bootstrap();
    const byDefault = relationalDbEntry(app, 'sql').db(name);
    const utc = relationalDbEntry(app, 'utc').db(name);
    expect(await one(byDefault, sql<{ TimeZone: string }>`show timezone`)).toEqual({
      TimeZone: 'Asia/Shanghai',
    });
    expect(await one(utc, sql<{ TimeZone: string }>`show timezone`)).toEqual({ TimeZone: 'UTC' });
    // Every pooled session has it, not only the first.
    const zones = await Promise.all(
      [1, 2, 3, 4].map(() =>
        one(
          byDefault,
          sql<{ tz: string }>`select current_setting('TimeZone') as tz, pg_sleep(0.05)`,
        ),
      ),
    );
    expect(new Set(zones.map((z) => z.tz))).toEqual(new Set(['Asia/Shanghai']));
  });

  it('sets application_name, search_path and statement_timeout', async () => {
    const name = uniqueDatabase('params');
    const { app } = await setup(
      relationalDbYaml({
        database: [
          {
            name,
            autoCreate: true,
            params: [
              'sslmode=disable',
              'application_name=svc-params',
              'search_path=tenant, public',
              'statement_timeout=150',
            ],
          },
        ],
      }),
      [name],
    );
    await app.bootstrap();
    const db = relationalDbEntry(app, 'sql').db(name);
    await sql`create schema tenant`.execute(db);
    await sql`create table tenant.t (x int)`.execute(db);
    expect(
      await one(
        db,
        sql`select current_setting('application_name') as app, current_setting('search_path') as path`,
      ),
    ).toEqual({
      app: 'svc-params',
      path: 'tenant, public',
    });
    // An unqualified name resolves in the first schema of search_path.
    await sql`insert into t values (1)`.execute(db);
    expect(await adminQuery('SELECT x FROM tenant.t', [], name)).toEqual([{ x: 1 }]);
    await expect(sql`select pg_sleep(2)`.execute(db)).rejects.toThrow(
      /canceling statement due to statement timeout/,
    );
  });

  it('sslmode=require refuses a server without TLS', async () => {
    const name = uniqueDatabase('ssl');
    const { app } = await setup(
      relationalDbYaml({
        addr: noTls.addr,
        database: [{ name, autoCreate: true, params: ['sslmode=require'] }],
      }),
      [],
    );
    await expect(app.bootstrap()).rejects.toThrow(/does not support SSL/);
  });

  it('sslmode: disable talks plain, require encrypts, verify-ca and verify-full reject an untrusted certificate', async () => {
    const seen: Record<string, boolean | string> = {};
    for (const mode of ['disable', 'require', 'verify-ca', 'verify-full']) {
      const { app } = await setup(
        relationalDbYaml({
          name: mode,
          addr: tls.addr,
          database: [{ name: 'postgres', params: [`sslmode=${mode}`] }],
        }),
        [],
      );
      try {
        await app.bootstrap();
        const { rows } = await sql<{
          ssl: boolean;
        }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(
          relationalDbEntry(app, mode).db('postgres'),
        );
        seen[mode] = rows[0]!.ssl;
      } catch (err) {
        seen[mode] = (err as Error).message.includes('self-signed certificate')
          ? 'untrusted certificate'
          : (err as Error).message;
      }
    }
    expect(seen).toEqual({
      disable: false,
      require: true,
      'verify-ca': 'untrusted certificate',
      'verify-full': 'untrusted certificate',
    });
  });
});

describe('dryRun', () => {
  it('compiles and logs statements without sending them; reads return no rows, writes affect 0 rows', async () => {
    const name = uniqueDatabase('dry');
    const { app, read } = await setup(
      (dir) =>
        relationalDbYaml({
          logger: { outputPaths: [path.join(dir, 'sql.log')] },
          database: [{ name, autoCreate: true, dryRun: true }],
        }),
      [name],
    );
    await app.bootstrap();
    const db = relationalDbEntry(app, 'sql').db<Tables>(name);
    // The table does not exist: a statement that reached the server would fail.
    expect(await db.selectFrom('item').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('item').selectAll().executeTakeFirst()).toBeUndefined();
    const inserted = await db
      .insertInto('item')
      .values({ id: 1, label: 'secret-label' })
      .executeTakeFirst();
    expect(inserted.numInsertedOrUpdatedRows).toBe(0n);
    const updated = await db
      .updateTable('item')
      .set({ label: 'b' })
      .where('id', '=', 1)
      .executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(0n);
    await db.transaction().execute(async (trx) => trx.deleteFrom('item').execute());
    expect(await adminQuery("SELECT 1 FROM pg_tables WHERE tablename = 'item'", [], name)).toEqual(
      [],
    );
    await app.shutdown();
    const log = await read('sql.log');
    expect(log).toContain('dry run, not sent: select * from "item"');
    expect(log).toContain('dry run, not sent: insert into "item" ("id", "label") values ($1, $2)');
    // Level warn (the default): no parameter values.
    expect(log).not.toContain('secret-label');
  });
});

describe('preferSimpleProtocol', () => {
  it('sends statements with their parameters inlined over the simple protocol', async () => {
    const name = uniqueDatabase('simple');
    const { app } = await setup(
      relationalDbYaml(
        { database: [{ name, autoCreate: true, preferSimpleProtocol: true }] },
        { name: 'extended', database: [{ name }] },
      ),
      [name],
    );
    await app.bootstrap();
    const simple = relationalDbEntry(app, 'sql').db(name);
    const extended = relationalDbEntry(app, 'extended').db(name);
    // Only the simple protocol accepts two statements in one message.
    const twoStatements = sql<{ b: number }>`select ${41}::int + 1 as a; select ${"it's"} as b`;
    expect((await twoStatements.execute(simple)).rows).toEqual([{ b: "it's" }]);
    await expect(twoStatements.execute(extended)).rejects.toThrow(
      /cannot insert multiple commands into a prepared statement/,
    );
    // Values round-trip as they do when bound.
    const values = await one(
      simple,
      sql`select ${7}::int as n, ${"O'Brien"}::text as s, ${null}::text as z, ${new Date('2026-01-02T03:04:05Z')}::timestamptz as t`,
    );
    expect(values).toEqual({ n: 7, s: "O'Brien", z: null, t: new Date('2026-01-02T03:04:05Z') });
  });
});

describe('pool options', () => {
  const pid = (db: Kysely<unknown>) =>
    one(db, sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.1)`).then((r) => r.pid);

  it('maxOpenConn caps the connections of a database', async () => {
    const name = uniqueDatabase('max');
    const { app } = await setup(
      relationalDbYaml(
        { maxOpenConn: 1, maxIdleConn: 1, database: [{ name, autoCreate: true }] },
        { name: 'two', maxOpenConn: 2, database: [{ name }] },
      ),
      [name],
    );
    await app.bootstrap();
    const single = await Promise.all(
      [1, 2, 3].map(() => pid(relationalDbEntry(app, 'sql').db(name))),
    );
    expect(new Set(single).size).toBe(1);
    const pair = await Promise.all([1, 2].map(() => pid(relationalDbEntry(app, 'two').db(name))));
    expect(new Set(pair).size).toBe(2);
  });

  it('maxIdleConn idle connections stay open; the ones above it close once idle for 10 s', async () => {
    const name = uniqueDatabase('idle');
    const { app } = await setup(
      relationalDbYaml({
        maxOpenConn: 4,
        maxIdleConn: 1,
        database: [{ name, autoCreate: true, params: ['application_name=idle-test'] }],
      }),
      [name],
    );
    await app.bootstrap();
    const db = relationalDbEntry(app, 'sql').db(name);
    const backends = async (): Promise<number> =>
      Number(
        (
          await adminQuery<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'idle-test'",
            [name],
          )
        )[0]!.n,
      );
    expect(new Set(await Promise.all([1, 2, 3, 4].map(() => pid(db)))).size).toBe(4);
    expect(await backends()).toBe(4);
    await waitFor('the pool to shrink to maxIdleConn', async () => (await backends()) === 1, {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
  });

  it('connMaxLifetimeMs replaces a connection once it is that old', async () => {
    const name = uniqueDatabase('life');
    const { app } = await setup(
      relationalDbYaml({
        maxOpenConn: 1,
        maxIdleConn: 1,
        connMaxLifetimeMs: 1000,
        database: [{ name, autoCreate: true }],
      }),
      [name],
    );
    await app.bootstrap();
    const db = relationalDbEntry(app, 'sql').db(name);
    const first = await pid(db);
    await waitFor('a new backend after the lifetime', async () => (await pid(db)) !== first, {
      timeoutMs: 10_000,
      intervalMs: 200,
    });
  });
});
