import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import { ConfigError, type App } from '@svcboot/entry-core';
import net from 'node:net';
import { freePort, waitFor } from '@svcboot/testkit';
import { columnarEntry, ColumnarQueryError, ident, sql, typed } from './index.js';
import {
  CLICKHOUSE_ADDR,
  adminClient,
  bootYaml,
  databaseExists,
  dropDatabase,
  tempDir,
  uniqueDb,
} from './test-support/clickhouse.js';

let admin: ClickHouseClient;
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(() => {
  admin = adminClient();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await admin.close();
});

/** Boots a one-entry app with app logs and statement logs in files; cleans everything up after the test. */
async function start(
  entryYaml: string,
  dbs: string[] = [],
): Promise<{
  app: App;
  appLog: (until?: string) => Promise<string>;
  sqlLog: () => Promise<string>;
}> {
  const tmp = await tempDir();
  cleanups.push(tmp.cleanup);
  for (const db of dbs) cleanups.push(() => dropDatabase(admin, db));
  const yaml = `app: { name: columnar-test }
logger:
  - name: applog
    level: info
    encoding: json
    outputPaths: [${tmp.dir}/app.log]
columnardb:
  - name: ch
    enabled: true
    loggerEntry: applog
${entryYaml}`;
  const app = await bootYaml(yaml, tmp.dir);
  cleanups.push(() => app.shutdown());
  // The logger writes to its file asynchronously: a test that reads right after an event waits
  // for that event's line (`until`), polling with a deadline.
  const appLog = (until?: string) =>
    until === undefined
      ? tmp.read('app.log')
      : waitFor(`app.log to contain ${JSON.stringify(until)}`, async () => {
          const text = await tmp.read('app.log');
          return text.includes(until) && text;
        });
  return { app, appLog, sqlLog: () => tmp.read('sql.log') };
}

function sqlLogger(dir: string, level = 'info', extra = ''): string {
  return `    logger:\n      level: ${level}\n      encoding: json\n      outputPaths: [${dir}]\n${extra}`;
}

describe('columnardb bootstrap', () => {
  it('autoCreate creates a missing database, logging creating / create success / connecting / connect success', async () => {
    const name = uniqueDb();
    const { app, appLog } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - name: ${name}\n        autoCreate: true\n`,
      [name],
    );
    expect(await databaseExists(admin, name)).toBe(false);
    await app.bootstrap();
    expect(await databaseExists(admin, name)).toBe(true);
    const lines = (await appLog(`Connecting to database ${name} at ${CLICKHOUSE_ADDR} success`))
      .split('\n')
      .filter((l) => l.includes(name))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(lines).toEqual([
      `Creating database ${name} at ${CLICKHOUSE_ADDR}`,
      `Creating database ${name} at ${CLICKHOUSE_ADDR} success`,
      `Connecting to database ${name} at ${CLICKHOUSE_ADDR}`,
      `Connecting to database ${name} at ${CLICKHOUSE_ADDR} success`,
    ]);
    const db = columnarEntry(app, 'ch').db(name);
    await db.command(sql`CREATE TABLE t (s String) ENGINE = Memory`);
    await db.insert('t', [{ s: 'one' }]);
    expect(await db.query(sql`SELECT s, currentDatabase() AS d FROM t`)).toEqual([
      { s: 'one', d: name },
    ]);
    expect(db.bindMode).toBe(columnarEntry(app, 'ch').bindMode);
  });

  it('does not log creating for a database that exists, and keeps its tables', async () => {
    const name = uniqueDb();
    cleanups.push(() => dropDatabase(admin, name));
    await admin.command({ query: `CREATE DATABASE ${name}` });
    await admin.command({ query: `CREATE TABLE ${name}.kept (x UInt8) ENGINE = Memory` });
    const { app, appLog } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - name: ${name}\n        autoCreate: true\n`,
    );
    await app.bootstrap();
    // Creating would come before this line, so once it is written, the check below is final.
    const log = await appLog(`Connecting to database ${name} at ${CLICKHOUSE_ADDR} success`);
    expect(log).not.toContain(`Creating database ${name}`);
    expect(log).toContain(`Connecting to database ${name} at ${CLICKHOUSE_ADDR} success`);
    expect(await columnarEntry(app, 'ch').db(name).query(sql`EXISTS TABLE kept`)).toEqual([
      { result: 1 },
    ]);
  });

  it('gives one handle per database and a clear error for an unknown one', async () => {
    const [a, b] = [uniqueDb(), uniqueDb()];
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${a}, autoCreate: true }\n      - { name: ${b}, autoCreate: true }\n`,
      [a, b],
    );
    await app.bootstrap();
    const entry = columnarEntry(app, 'ch');
    expect(entry.db(a)).not.toBe(entry.db(b));
    expect(entry.db(a).client).not.toBe(entry.db(b).client);
    expect(await entry.db(b).query<{ d: string }>('SELECT currentDatabase() AS d')).toEqual([
      { d: b },
    ]);
    expect(() => entry.db('nope')).toThrow(
      `columnardb[ch] has no database "nope"; it has: ${a}, ${b}`,
    );
    expect(() => entry.db('nope')).toThrow(
      expect.objectContaining({ name: 'EntryLookupError', code: 'SVC_COLUMNAR_NO_DATABASE' }),
    );
  });

  it('sends params as ClickHouse settings with every query', async () => {
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - name: ${name}\n        autoCreate: true\n        params: ["max_block_size=1234", "", "max_execution_time = 17"]\n`,
      [name],
    );
    await app.bootstrap();
    const rows = await columnarEntry(app, 'ch')
      .db(name)
      .query<{ name: string; value: string }>(
        sql`SELECT name, value FROM system.settings WHERE name IN ('max_block_size', 'max_execution_time') ORDER BY name`,
      );
    expect(rows).toEqual([
      { name: 'max_block_size', value: '1234' },
      { name: 'max_execution_time', value: '17' },
    ]);
  });

  it('runs afterConnect hooks once connected, and fails bootstrap when one throws', async () => {
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n`,
      [name],
    );
    const entry = columnarEntry(app, 'ch');
    const seen: string[] = [];
    entry.afterConnect(async (e) => {
      seen.push(
        ...(await e.db(name).query<{ d: string }>('SELECT currentDatabase() AS d')).map((r) => r.d),
      );
    });
    entry.afterConnect(() => {
      throw new Error('migration 7 failed');
    });
    await expect(app.bootstrap()).rejects.toThrow(
      'columnardb[ch]: an afterConnect hook failed: migration 7 failed',
    );
    expect(seen).toEqual([name]);
  });

  it('writes statements to a logger entry named by logger.entry', async () => {
    const name = uniqueDb();
    const { app, appLog } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n    logger:\n      entry: applog\n      level: info\n`,
      [name],
    );
    await app.bootstrap();
    await columnarEntry(app, 'ch').db(name).query(sql`SELECT ${'to-applog'} AS v`);
    await app.shutdown();
    const line = (await appLog()).split('\n').find((l) => l.includes('to-applog'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      msg: expect.stringMatching(/^\[[\d.]+ms\] SELECT /),
      database: name,
      entryName: 'ch',
      values: { p0: 'to-applog' },
    });
  });

  it('closes its clients at interrupt', async () => {
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n`,
      [name],
    );
    await app.bootstrap();
    const db = columnarEntry(app, 'ch').db(name);
    await db.query('SELECT 1');
    expect(await app.shutdown()).toBe(true);
    await expect(db.query('SELECT 1')).rejects.toThrow(
      `columnardb[ch] database "${name}" is not connected`,
    );
    await expect(db.query('SELECT 1')).rejects.toMatchObject({
      code: 'SVC_COLUMNAR_NOT_CONNECTED',
    });
  });
});

describe('columnardb bootstrap failures', () => {
  const PASSWORD = 'hunter2-Very-Secret';

  async function failure(entryYaml: string): Promise<string> {
    const { app } = await start(entryYaml);
    const err = await app.bootstrap().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    return app.redact(String(err?.message));
  }

  it('names the entry, address, database and cause when the database is missing and autoCreate is off', async () => {
    const name = uniqueDb();
    const message = await failure(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - name: ${name}\n`,
    );
    expect(message).toContain('columnardb[ch]');
    expect(message).toContain(`database "${name}" at ${CLICKHOUSE_ADDR}`);
    expect(message).toMatch(/Database .* doesn't exist/);
    expect(message).toContain('autoCreate: true');
    expect(await databaseExists(admin, name)).toBe(false);
  });

  it('says the server is unreachable, without the password', async () => {
    const port = await freePort();
    const message = await failure(
      `    addr: 127.0.0.1:${port}\n    pass: ${PASSWORD}\n    database:\n      - name: x\n`,
    );
    expect(message).toContain(
      `cannot connect to the server at 127.0.0.1:${port} as user "default"`,
    );
    expect(message).toContain('ECONNREFUSED');
    expect(message).toContain('is ClickHouse running');
    expect(message).not.toContain(PASSWORD);
  });

  it('reports a wrong password without printing it', async () => {
    const message = await failure(
      `    addr: ${CLICKHOUSE_ADDR}\n    pass: ${PASSWORD}\n    database:\n      - name: x\n`,
    );
    expect(message).toMatch(/password|Authentication/i);
    expect(message).toContain('check user and pass');
    expect(message).not.toContain(PASSWORD);
  });

  it('fails on an unknown setting in params with the server message', async () => {
    const name = uniqueDb();
    const message = await failure(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true, params: ["no_such_setting=1"] }\n`,
    );
    cleanups.push(() => dropDatabase(admin, name));
    expect(message).toContain(`cannot connect to database "${name}"`);
    expect(message).toContain('Unknown setting no_such_setting');
    expect(message).toContain('database[].params');
  });

  it('gives up within the bootstrap timeout when the server accepts but never answers', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    cleanups.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => silent.close(resolve));
    });
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const app = await bootYaml(
      `columnardb:\n  - name: ch\n    enabled: true\n    addr: 127.0.0.1:${port}\n    database: [{ name: x }]\n`,
      tmp.dir,
      {
        bootstrapTimeoutMs: 500,
      },
    );
    cleanups.push(() => app.shutdown());
    // Without the timeout this would hang until the test's own limit; the message shows which limit ended it.
    const err = (await app.bootstrap().catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('bootstrap of columnardb[ch] did not finish within 500 ms');
  });

  it('is off unless enabled (the columnardb default is enabled: false)', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const app = await bootYaml('columnardb:\n  - name: ch\n    database: [{ name: x }]\n', tmp.dir);
    cleanups.push(() => app.shutdown());
    expect(() => columnarEntry(app, 'ch')).toThrow(/ch/);
  });

  it('rejects the native port 9000 and malformed options when boot.yaml is loaded', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const err = await bootYaml(
      'columnardb:\n  - name: ch\n    enabled: true\n    addr: localhost:9000\n    database:\n      - { name: a, params: ["nonsense"] }\n      - { name: a }\n',
      tmp.dir,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const text = String((err as Error).message);
    expect(text).toContain("port 9000 is ClickHouse's native TCP port");
    expect(text).toContain('uses the HTTP interface');
    expect(text).toContain('localhost:8123');
    expect(text).toContain('param "nonsense" is not key=value');
    expect(text).toContain('database "a" is listed twice');
  });
});

describe('columnardb statements', () => {
  it('round-trips hostile strings exactly through the server', async () => {
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n`,
      [name],
    );
    await app.bootstrap();
    const db = columnarEntry(app, 'ch').db(name);
    const hostile = [
      "'",
      "''; DROP DATABASE default; --",
      '\\',
      "\\'",
      "\\' OR 1 = 1 --",
      'line\nbreak\r\ttab',
      '\0',
      'nul\0inside',
      'é中文😀🏳️‍🌈',
      '\u2028\u2029\u007f\u0001\u001f',
      '{p0:String}',
      '?',
      '$1',
      '\\x00',
      '\\N',
      '/* not a comment */ -- nor this',
      '`backtick`',
      '',
      'x'.repeat(10_000),
    ];
    await db.command(sql`CREATE TABLE hostile (i UInt32, s String) ENGINE = MergeTree ORDER BY i`);
    for (const [i, s] of hostile.entries())
      await db.command(sql`INSERT INTO hostile (i, s) VALUES (${i}, ${s})`);
    const rows = await db.query<{ i: number; s: string }>(sql`SELECT i, s FROM hostile ORDER BY i`);
    expect(rows.map((r) => r.s)).toEqual(hostile);
    for (const [i, s] of hostile.entries()) {
      expect(await db.query<{ i: number }>(sql`SELECT i FROM hostile WHERE s = ${s}`)).toEqual([
        { i },
      ]);
      expect(await db.query<{ v: string }>(sql`SELECT ${s} AS v`)).toEqual([{ v: s }]);
    }
    // The same strings through insert() (JSONEachRow) come back the same too.
    await db.command(
      sql`CREATE TABLE hostile_json (i UInt32, s String) ENGINE = MergeTree ORDER BY i`,
    );
    await db.insert(
      'hostile_json',
      hostile.map((s, i) => ({ i, s })),
    );
    expect(
      (await db.query<{ s: string }>(sql`SELECT s FROM hostile_json ORDER BY i`)).map((r) => r.s),
    ).toEqual(hostile);
    // Nothing was dropped by the would-be injections.
    expect(await databaseExists(admin, 'default')).toBe(true);
    expect(await db.query(sql`SELECT count() AS n FROM hostile`)).toEqual([
      { n: String(hostile.length) },
    ]);
  });

  it('binds numbers, arrays, nulls and dates', async () => {
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n`,
      [name],
    );
    await app.bootstrap();
    const db = columnarEntry(app, 'ch').db(name);
    const when = new Date(Date.UTC(2026, 10, 21, 6, 0, 0));
    const [row] = await db.query<Record<string, unknown>>(
      sql`SELECT 5 -${-1} AS six, ${2.5} * 2 AS five, ${['a', "b'"]} AS arr, isNull(${null}) AS nul, toUnixTimestamp(${when}) AS ts, ${true} AS yes`,
    );
    expect(row).toEqual({
      six: 6,
      five: 5,
      arr: ['a', "b'"],
      nul: 1,
      ts: when.getTime() / 1000,
      yes: 1,
    });
    const uuid = '0b79211e-ffe1-454d-a035-e12d3006178d';
    expect(
      await db.query(
        sql`SELECT toTypeName(${typed(uuid, 'UUID')}) AS t, toString(${typed(uuid, 'UUID')}) AS u, ${ident('x')} FROM (SELECT 1 AS x)`,
      ),
    ).toEqual([{ t: 'UUID', u: uuid, x: 1 }]);
  });

  it('logs statements with values at info, and only their shape at warn (slow) and error', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const name = uniqueDb();
    const infoLog = `${tmp.dir}/info.log`;
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n${sqlLogger(infoLog)}`,
      [name],
    );
    await app.bootstrap();
    const db = columnarEntry(app, 'ch').db(name);
    await db.query(sql`SELECT ${'visible-value'} AS v`);
    await app.shutdown();
    const info = await tmp.read('info.log');
    expect(info).toContain('visible-value');
    expect(info).toMatch(/"msg":"\[[\d.]+ms\] SELECT /);

    const warnLog = `${tmp.dir}/warn.log`;
    const { app: app2 } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true }\n${sqlLogger(warnLog, 'warn', '      slowThresholdMs: 1000\n')}`,
    );
    await app2.bootstrap();
    const db2 = columnarEntry(app2, 'ch').db(name);
    // Far apart on purpose: a busy machine may take tens of milliseconds for the fast query.
    await db2.query(sql`SELECT sleep(1.5), ${'hidden-slow-value'} AS v`);
    await db2.query(sql`SELECT ${'hidden-fast-value'} AS v`);
    const err = await db2
      .query(sql`SELECT no_such_column, ${'hidden-error-value'}`)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ColumnarQueryError);
    expect((err as ColumnarQueryError).code).toBe(47);
    expect((err as Error).message).toContain(`columnardb[ch] database "${name}"`);
    expect((err as Error).message).toContain('no_such_column');
    await app2.shutdown();
    const lines = (await tmp.read('warn.log'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; msg: string; durationMs?: number });
    expect(lines.map((l) => l.level)).toEqual(['warn', 'error']);
    expect(lines[0]!.msg).toMatch(
      /^SLOW SQL >= 1000ms \[[\d.]+ms\] SELECT sleep\(1\.5\), \{p0:String\} AS v$/,
    );
    expect(lines[1]!.msg).toMatch(
      /^\[[\d.]+ms\] SELECT no_such_column, \{p0:String\}: .*no_such_column/,
    );
    expect(lines[0]!.durationMs).toBeGreaterThanOrEqual(1000);
    expect(JSON.stringify(lines)).not.toMatch(/hidden-/);
  });

  it('dryRun compiles and logs statements without sending them, and needs no database', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const name = uniqueDb();
    const { app } = await start(
      `    addr: ${CLICKHOUSE_ADDR}\n    database:\n      - { name: ${name}, autoCreate: true, dryRun: true }\n${sqlLogger(`${tmp.dir}/sql.log`)}`,
      [name],
    );
    await app.bootstrap();
    const db = columnarEntry(app, 'ch').db(name);
    expect(db.dryRun).toBe(true);
    await db.command(sql`CREATE TABLE ${name}.t (s String) ENGINE = Memory`);
    await db.insert('t', [{ s: 'x' }]);
    expect(await db.query(sql`SELECT ${'dry'} AS v`)).toEqual([]);
    await app.shutdown();
    expect(await databaseExists(admin, name)).toBe(false);
    const log = await tmp.read('sql.log');
    expect(log).toContain('"dryRun":true');
    expect(log).toContain('dry run, not sent: ');
    expect(log).toContain('CREATE TABLE');
    expect(log).toContain('INSERT INTO `t` FORMAT JSONEachRow');
  });
});
