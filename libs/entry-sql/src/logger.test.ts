import path from 'node:path';
import { NoResultError, sql, type Compilable, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { relationalDbEntry, type SqlLoggerConfig } from './index.js';
import { uniqueDatabase } from './test-support/pg.js';
import { relationalDbYaml } from './test-support/yaml.js';
import { sqlHarness } from './test-support/harness.js';

const { setup } = sqlHarness();

interface Tables {
  person: { id: number; name: string };
}

/** Boots one entry with `logger` options writing to sql.log, runs `work`, shuts down, returns the log. */
async function sqlLog(
  logger: Partial<SqlLoggerConfig>,
  work: (
    db: Kysely<Tables>,
    take: <T>(q: Compilable & { executeTakeFirstOrThrow(): Promise<T> }) => Promise<T>,
  ) => Promise<void>,
): Promise<string> {
  const name = uniqueDatabase('log');
  const { app, read } = await setup(
    (dir) =>
      relationalDbYaml({
        logger: { outputPaths: [path.join(dir, 'sql.log')], ...logger },
        database: [{ name, autoCreate: true }],
      }),
    [name],
  );
  await app.bootstrap();
  const entry = relationalDbEntry(app, 'sql');
  const db = entry.db<Tables>(name);
  await sql`create table person (id int primary key, name text)`.execute(db);
  await work(db, (q) => entry.takeFirstOrThrow(name, q));
  await app.shutdown();
  return read('sql.log');
}

const failing = async (db: Kysely<Tables>): Promise<void> => {
  await expect(
    db
      .insertInto('person')
      .values([
        { id: 1, name: 'dup-value' },
        { id: 1, name: 'dup-value' },
      ])
      .execute(),
  ).rejects.toThrow(/duplicate key/);
};

describe('the SQL logger', () => {
  it('level info: every statement with its duration and parameter values', async () => {
    const log = await sqlLog({ level: 'info' }, async (db) => {
      await db.insertInto('person').values({ id: 1, name: 'param-value' }).execute();
      await failing(db);
    });
    expect(log).toMatch(
      /\tINFO\tsql\t\[[\d.]+ms\] insert into "person" \("id", "name"\) values \(\$1, \$2\)\t\{.*"values":\[1,"param-value"\]/,
    );
    expect(log).toMatch(
      /\tERROR\tsql\t\[[\d.]+ms\] insert into "person" .*: duplicate key value violates unique constraint "person_pkey"\t.*"code":"23505"/,
    );
  });

  it('level warn (default): only slow statements, with their duration and without parameter values', async () => {
    // Slow and fast far apart: a busy machine can take tens of milliseconds for the insert.
    const log = await sqlLog({ slowThresholdMs: 1000 }, async (db) => {
      await db.insertInto('person').values({ id: 1, name: 'fast-value' }).execute();
      await sql`select pg_sleep(${1.5}), ${'slow-value'}::text`.execute(db);
      await failing(db);
    });
    expect(log).not.toContain('fast-value');
    expect(log).not.toContain('insert into "person" ("id", "name") values ($1, $2)\t');
    expect(log).toMatch(
      /\tWARN\tsql\tSLOW SQL >= 1000ms \[\d+(\.\d+)?ms\] select pg_sleep\(\$1\), \$2::text\t\{"database":"[^"]+","durationMs":\d/,
    );
    expect(log).not.toContain('slow-value');
    expect(log).toContain('ERROR\tsql');
    expect(log).not.toContain('dup-value');
  });

  it('slowThresholdMs: statements faster than it are not slow', async () => {
    const log = await sqlLog({ slowThresholdMs: 60_000 }, async (db) => {
      await sql`select pg_sleep(0.2)`.execute(db);
    });
    expect(log).toBe('');
  });

  it('level error: failures only; silent: nothing', async () => {
    const errors = await sqlLog({ level: 'error', slowThresholdMs: 1 }, async (db) => {
      await sql`select pg_sleep(0.05)`.execute(db);
      await failing(db);
    });
    expect(errors).not.toContain('SLOW SQL');
    expect(errors).toContain('duplicate key value');
    const silent = await sqlLog({ level: 'silent', slowThresholdMs: 1 }, async (db) => {
      await sql`select pg_sleep(0.05)`.execute(db);
      await failing(db);
    });
    expect(silent).toBe('');
  });

  it('json encoding writes one object a line', async () => {
    const log = await sqlLog({ level: 'info', encoding: 'json' }, async (db) => {
      await db.selectFrom('person').select('name').where('id', '=', 5).execute();
    });
    const lines = log
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      lines.find((l) => String(l['msg']).includes('select "name" from "person"')),
    ).toMatchObject({ level: 'info', entryName: 'sql', values: [5] });
  });

  it('logs record-not-found from takeFirstOrThrow unless ignoreRecordNotFoundError', async () => {
    const noRow = (db: Kysely<Tables>) => db.selectFrom('person').selectAll().where('id', '=', 404);
    const logged = await sqlLog({}, async (db, take) => {
      await expect(take(noRow(db))).rejects.toBeInstanceOf(NoResultError);
    });
    expect(logged).toMatch(
      /\tERROR\tsql\trecord not found: select \* from "person" where "id" = \$1/,
    );
    const ignored = await sqlLog({ ignoreRecordNotFoundError: true }, async (db, take) => {
      await expect(take(noRow(db))).rejects.toBeInstanceOf(NoResultError);
    });
    expect(ignored).toBe('');
  });

  it('logger.entry writes to a named logger entry instead', async () => {
    const name = uniqueDatabase('named');
    const { app, read } = await setup(
      relationalDbYaml({
        logger: { entry: 'applog', level: 'info' },
        database: [{ name, autoCreate: true }],
      }),
      [name],
    );
    await app.bootstrap();
    await sql`select ${'via-applog'}::text`.execute(relationalDbEntry(app, 'sql').db(name));
    await app.shutdown();
    expect(await read('app.log')).toMatch(
      /\tINFO\tsql\t\[[\d.]+ms\] select \$1::text\t.*"values":\["via-applog"\]/,
    );
  });
});
