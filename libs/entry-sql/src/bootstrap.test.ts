import net from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BootstrapError } from '@svcboot/entry-core';
import { freePort, waitFor } from '@svcboot/testkit';
import { pino } from 'pino';
import { relationalDbEntry } from './index.js';
import { connectMaintenance, createDatabase as createAfterLookup } from './auto-create.js';
import {
  adminQuery,
  createDatabase,
  databaseExists,
  dropDatabase,
  PG_ADDR,
  uniqueDatabase,
} from './test-support/pg.js';
import { sqlHarness } from './test-support/harness.js';
import { relationalDbYaml } from './test-support/yaml.js';
import { startPrivatePostgres } from '@svcboot/testkit';

const SECRET = 'Sup3r-s3cret-pw';
const { setup, defer } = sqlHarness();

describe('autoCreate', () => {
  it('creates a missing database (owner postgres, UTF8) and logs the four steps', async () => {
    const name = uniqueDatabase('create');
    const { app, log } = await setup(relationalDbYaml({ database: [{ name, autoCreate: true }] }), [
      name,
    ]);
    expect(await databaseExists(name)).toBe(false);
    await app.bootstrap();
    const [row] = await adminQuery<{ owner: string; encoding: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner, pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = $1',
      [name],
    );
    expect(row).toEqual({ owner: 'postgres', encoding: 'UTF8' });
    const db = relationalDbEntry(app, 'sql').db<Record<string, never>>(name);
    const { rows } = await sql<{ current: string }>`select current_database() as current`.execute(
      db,
    );
    expect(rows[0]?.current).toBe(name);
    await app.shutdown();
    const text = await log();
    const steps = [
      `Creating database [${name}]`,
      `Creating database [${name}] success`,
      `Connecting to database [${name}]`,
      `Connecting to database [${name}] success`,
    ];
    let at = -1;
    for (const step of steps) {
      const next = text.indexOf(`${step}\n`, at + 1);
      expect(next, `${step} after position ${at} in\n${text}`).toBeGreaterThan(at);
      at = next;
    }
  });

  it('creates the database without the session params (a short statement_timeout would cancel CREATE DATABASE)', async () => {
    // CREATE DATABASE copies a template (~150 ms on this machine, never under 40 ms), while the
    // connection's SELECT 1 fits in 40 ms even on a loaded machine; 1 ms (this test's first
    // form) also cancelled that ping whenever the machine was busy.
    const name = uniqueDatabase('timeout');
    const { app } = await setup(
      relationalDbYaml({
        database: [
          { name, autoCreate: true, params: ['statement_timeout=40', 'search_path=nowhere'] },
        ],
      }),
      [name],
    );
    await app.bootstrap();
    expect(await databaseExists(name)).toBe(true);
  });

  it('escapes the database name', async () => {
    const name = `${uniqueDatabase('quote')} "x"; drop`;
    const { app } = await setup(relationalDbYaml({ database: [{ name, autoCreate: true }] }), [
      name,
    ]);
    await app.bootstrap();
    expect(await databaseExists(name)).toBe(true);
  });

  it('connects to an existing database without creating it', async () => {
    const name = uniqueDatabase('exists');
    await createDatabase(name);
    const { app, log } = await setup(relationalDbYaml({ database: [{ name, autoCreate: true }] }), [
      name,
    ]);
    await app.bootstrap();
    await app.shutdown();
    const text = await log();
    expect(text).not.toContain('Creating database');
    expect(text).toContain(`Connecting to database [${name}] success`);
  });

  it('lets two entries of two apps create the same database at once', async () => {
    for (let round = 0; round < 3; round++) {
      const name = uniqueDatabase('race');
      const a = await setup(
        relationalDbYaml({ name: 'a', database: [{ name, autoCreate: true }] }),
        [name],
      );
      const b = await setup(
        relationalDbYaml({ name: 'b', database: [{ name, autoCreate: true }] }),
        [],
      );
      await Promise.all([a.app.bootstrap(), b.app.bootstrap()]);
      expect(await databaseExists(name)).toBe(true);
      for (const [app, entry] of [
        [a.app, 'a'],
        [b.app, 'b'],
      ] as const) {
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(
          relationalDbEntry(app, entry).db(name),
        );
        expect(rows).toEqual([{ one: 1 }]);
      }
    }
  });
});

describe('createDatabase after a lookup that saw no database', () => {
  it('treats a database another client created meanwhile as success, and other errors as errors', async () => {
    const name = uniqueDatabase('dup');
    defer(() => dropDatabase(name));
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const client = await connectMaintenance({ host: '127.0.0.1', port: 5432, user: 'postgres' });
    try {
      await createAfterLookup(client, name, logger);
      expect(lines.some((l) => l.includes('another client'))).toBe(false);
      // As the loser of a race would: CREATE DATABASE of a name that now exists (42P04).
      await createAfterLookup(client, name, logger);
      expect(
        lines.filter((l) =>
          l.includes(`Database [${name}] was created by another client meanwhile`),
        ),
      ).toHaveLength(1);
      expect(lines.filter((l) => l.includes(`Creating database [${name}] success`))).toHaveLength(
        2,
      );
      await client.query('SET ROLE pg_monitor');
      await expect(createAfterLookup(client, uniqueDatabase('denied'), logger)).rejects.toThrow(
        /permission denied to create database/,
      );
    } finally {
      await client.end();
    }
  });
});

describe('bootstrap failures', () => {
  it('names entry, address, database and the fix when the database is missing and autoCreate is off', async () => {
    const name = uniqueDatabase('missing');
    const { app } = await setup(relationalDbYaml({ pass: SECRET, database: [{ name }] }), []);
    const failure = await app.bootstrap().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(BootstrapError);
    const message = (failure as Error).message;
    expect(message).toContain('relationaldb entry "sql" failed to bootstrap');
    expect(message).toContain(`database "${name}" at ${PG_ADDR} (user postgres)`);
    expect(message).toContain(`database "${name}" does not exist`);
    expect(message).toContain('set autoCreate: true');
    expect(message).not.toContain(SECRET);
    expect((failure as Error).cause).toMatchObject({ code: 'SVC_SQL_UNREACHABLE' });
    expect(await databaseExists(name)).toBe(false);
  });

  it('names the address and the refused connection when nothing listens, never the password', async () => {
    const port = await freePort();
    const { app, log } = await setup(
      relationalDbYaml({ addr: `127.0.0.1:${port}`, pass: SECRET, database: [{ name: 'app' }] }),
      [],
    );
    const err = (await app.bootstrap().catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      new RegExp(
        `cannot reach the PostgreSQL server at 127\\.0\\.0\\.1:${port} \\(for database "app", user postgres\\): .*ECONNREFUSED.*; check addr and that PostgreSQL is up`,
      ),
    );
    expect(err.cause).toMatchObject({ code: 'SVC_SQL_SERVER_UNREACHABLE' });
    expect(err.message).not.toContain(SECRET);
    expect(await log()).not.toContain(SECRET);
  });

  it('with autoCreate, an unreachable server is reported as unreachable, not as a database it cannot create', async () => {
    const port = await freePort();
    const { app } = await setup(
      relationalDbYaml({
        addr: `127.0.0.1:${port}`,
        database: [{ name: 'app', autoCreate: true }],
      }),
      [],
    );
    const err = (await app.bootstrap().catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      new RegExp(`cannot reach the PostgreSQL server at 127\\.0\\.0\\.1:${port} .*ECONNREFUSED`),
    );
    expect(err.message).not.toContain('cannot create');
    expect(err.cause).toMatchObject({ code: 'SVC_SQL_SERVER_UNREACHABLE' });
  });

  it('authenticates with user and pass; a wrong pass fails naming the user, never the password', async () => {
    const server = await startPrivatePostgres({ password: SECRET });
    defer(() => server.remove());
    const good = await setup(
      relationalDbYaml({
        addr: server.addr,
        pass: SECRET,
        database: [{ name: 'app', autoCreate: true }],
      }),
      [],
    );
    await good.app.bootstrap();
    const { rows } = await sql<{ who: string }>`select current_user as who`.execute(
      relationalDbEntry(good.app, 'sql').db('app'),
    );
    expect(rows).toEqual([{ who: 'postgres' }]);
    const wrong = 'Wr0ng-pass-word';
    const bad = await setup(
      relationalDbYaml({ addr: server.addr, pass: wrong, database: [{ name: 'app' }] }),
      [],
    );
    const err = (await bad.app.bootstrap().catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(
      `cannot connect to database "app" at ${server.addr} (user postgres): password authentication failed for user "postgres"`,
    );
    expect(err.message).toContain('check user and pass');
    expect(err.message).not.toContain(wrong);
    expect(await bad.log()).not.toContain(wrong);
    const nobody = await setup(
      relationalDbYaml({ user: 'svcboot_nobody', database: [{ name: 'postgres' }] }),
      [],
    );
    await expect(nobody.app.bootstrap()).rejects.toThrow(
      /\(user svcboot_nobody\): role "svcboot_nobody" does not exist/,
    );
  });

  it('gives up after connectTimeoutMs on a server that never answers', async () => {
    const sockets = new Set<net.Socket>();
    // Accepts, reads and never answers.
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.resume();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    defer(() => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => silent.close(r));
    });
    const { port } = silent.address() as net.AddressInfo;
    const { app } = await setup(
      relationalDbYaml({
        addr: `127.0.0.1:${port}`,
        connectTimeoutMs: 200,
        database: [{ name: 'app', autoCreate: true }],
      }),
      [],
    );
    await expect(app.bootstrap()).rejects.toThrow(
      new RegExp(
        `cannot reach the PostgreSQL server at 127\\.0\\.0\\.1:${port} .*(timeout|terminated)`,
        'i',
      ),
    );
  });
});

describe('a failed bootstrap', () => {
  it('ends the pools of the databases it had already opened', async () => {
    const opened = uniqueDatabase('opened');
    const missing = uniqueDatabase('missing');
    const { app } = await setup(
      relationalDbYaml({ database: [{ name: opened, autoCreate: true }, { name: missing }] }),
      [opened],
    );
    await expect(app.bootstrap()).rejects.toThrow(`database "${missing}" does not exist`);
    await waitFor(
      'no connection left to the opened database',
      async () =>
        Number(
          (
            await adminQuery<{ n: string }>(
              'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
              [opened],
            )
          )[0]!.n,
        ) === 0,
    );
  });
});

describe('the entry', () => {
  it('returns typed handles per database and names the databases for an unknown one', async () => {
    const one = uniqueDatabase('one');
    const two = uniqueDatabase('two');
    const { app } = await setup(
      relationalDbYaml({
        database: [
          { name: one, autoCreate: true },
          { name: two, autoCreate: true },
        ],
      }),
      [one, two],
    );
    await app.bootstrap();
    const entry = relationalDbEntry(app, 'sql');
    expect(entry.type).toBe('RelationalDbEntry');
    expect(entry.databaseNames()).toEqual([one, two]);
    expect(entry.db(one)).not.toBe(entry.db(two));
    expect(() => entry.db('nope')).toThrow(
      `relationaldb[sql] has no database "nope"; its databases: ${one}, ${two}`,
    );
  });

  it('is disabled unless enabled: true (the relationaldb default is enabled: false)', async () => {
    const { app } = await setup(`relationaldb: [{ name: off, database: [{ name: x }] }]\n`, []);
    expect(() => relationalDbEntry(app, 'off')).toThrow(/disabled/);
  });

  it('ends its pools at interrupt', async () => {
    const name = uniqueDatabase('interrupt');
    const { app } = await setup(
      relationalDbYaml({
        database: [{ name, autoCreate: true, params: ['application_name=interrupt-test'] }],
      }),
      [name],
    );
    await app.bootstrap();
    const db = relationalDbEntry(app, 'sql').db(name);
    await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db)));
    const backends = async (): Promise<number> =>
      Number(
        (
          await adminQuery<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          )
        )[0]!.n,
      );
    expect(await backends()).toBeGreaterThan(0);
    expect(await app.shutdown()).toBe(true);
    await waitFor('the pool to close its connections', async () => (await backends()) === 0);
    await expect(sql`select 1`.execute(db)).rejects.toThrow();
  });
});

describe('afterConnect', () => {
  it('runs hooks after the databases answer, and a failing hook fails the boot', async () => {
    const name = uniqueDatabase('hook');
    const { app } = await setup(relationalDbYaml({ database: [{ name, autoCreate: true }] }), [
      name,
    ]);
    const entry = relationalDbEntry(app, 'sql');
    const seen: string[] = [];
    entry.afterConnect(async (e) => {
      const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(
        e.db(name),
      );
      seen.push(rows[0]!.db);
    });
    entry.afterConnect(async () => {
      throw new Error('migration 0002 failed');
    });
    await expect(app.bootstrap()).rejects.toThrow(
      'relationaldb entry "sql" failed to bootstrap: migration 0002 failed',
    );
    expect(seen).toEqual([name]);
  });
});
