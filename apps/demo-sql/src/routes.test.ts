import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, type App } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import '@svcboot/entry-sql';
import { waitFor } from '@svcboot/testkit';
import { registerRoutes } from './routes.js';
import { adminQuery, dropDatabase, startPrivatePostgres, uniqueDatabase } from '@svcboot/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const SHARED = '127.0.0.1:5432';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function admin<R extends Record<string, unknown>>(
  addr: string,
  database: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  return adminQuery<R>(text, values, database, addr);
}

/** Boots the demo's own boot.yaml on a free port, with a database of its own that is dropped afterwards. */
async function startDemo(
  options: { addr?: string; edit?: (yaml: string) => string } = {},
): Promise<{ base: string; app: App; database: string }> {
  const addr = options.addr ?? SHARED;
  const database = uniqueDatabase('demo');
  cleanups.push(() => dropDatabase(database, addr).catch(() => undefined));
  const app = await boot({
    configText: (options.edit ?? ((y: string) => y))(
      await readFile(path.join(here, '../boot.yaml'), 'utf8'),
    ),
    env: { PORT: '0', PG_ADDR: addr, PG_DATABASE: database },
    argv: ['--set', 'httpserver.api.host=127.0.0.1'],
  });
  cleanups.push(() => app.shutdown('test end'));
  registerRoutes(app);
  await app.bootstrap();
  return { base: `http://127.0.0.1:${httpEntry(app, 'api').port}`, app, database };
}

async function call(
  method: string,
  url: string,
): Promise<{ status: number; type: string; body: unknown; text: string }> {
  const res = await fetch(url, { method });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    type,
    text,
    body: type.includes('json') ? (JSON.parse(text) as unknown) : text,
  };
}

describe('demo-sql (ARCHITECTURE.md §7)', () => {
  it('migrates the users table: serial id, name, hidden timestamps, indexed deleted_at', async () => {
    const { database } = await startDemo();
    const columns = await admin<{
      column_name: string;
      data_type: string;
      column_default: string | null;
    }>(
      SHARED,
      database,
      "SELECT column_name, data_type, column_default FROM information_schema.columns WHERE table_name = 'users' ORDER BY ordinal_position",
    );
    expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([
      ['id', 'integer'],
      ['name', 'text'],
      ['created_at', 'timestamp with time zone'],
      ['updated_at', 'timestamp with time zone'],
      ['deleted_at', 'timestamp with time zone'],
    ]);
    expect(columns[0]!.column_default).toMatch(/^nextval/);
    const indexes = await admin<{ indexdef: string }>(
      SHARED,
      database,
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'users'",
    );
    expect(indexes.map((i) => i.indexdef)).toContainEqual(expect.stringContaining('(deleted_at)'));
  });

  it('PUT /v1/user creates a user with a database id; GETs return id and name only', async () => {
    const { base } = await startDemo();
    const alice = await call('PUT', `${base}/v1/user?name=alice`);
    expect(alice).toMatchObject({ status: 200, body: { id: 1, name: 'alice' } });
    const bob = await call('PUT', `${base}/v1/user?name=bob`);
    expect(bob.body).toEqual({ id: 2, name: 'bob' });
    expect(await call('GET', `${base}/v1/user`)).toMatchObject({
      status: 200,
      body: [
        { id: 1, name: 'alice' },
        { id: 2, name: 'bob' },
      ],
    });
    expect(await call('GET', `${base}/v1/user/2`)).toMatchObject({
      status: 200,
      body: { id: 2, name: 'bob' },
    });
    const empty = await call('PUT', `${base}/v1/user?name=`);
    expect(empty.body).toEqual({ id: 3, name: '' });
  });

  it('GET /v1/user/:id of a missing row answers 200 with an empty-valued user', async () => {
    const { base } = await startDemo();
    expect(await call('GET', `${base}/v1/user/42`)).toMatchObject({
      status: 200,
      text: '{"id":0,"name":""}',
    });
    expect(await call('GET', `${base}/v1/user`)).toMatchObject({ status: 200, text: '[]' });
  });

  it('POST /v1/user/:id renames and answers the re-read user; updated_at moves, created_at stays', async () => {
    const { base, database } = await startDemo();
    await call('PUT', `${base}/v1/user?name=alice`);
    const [before] = await admin<{ created_at: Date; updated_at: Date }>(
      SHARED,
      database,
      'SELECT created_at, updated_at FROM users WHERE id = 1',
    );
    const res = await call('POST', `${base}/v1/user/1?name=alicia`);
    expect(res).toMatchObject({ status: 200, body: { id: 1, name: 'alicia' } });
    const [after] = await admin<{ created_at: Date; updated_at: Date }>(
      SHARED,
      database,
      'SELECT created_at, updated_at FROM users WHERE id = 1',
    );
    expect(after!.created_at).toEqual(before!.created_at);
    expect(after!.updated_at.getTime()).toBeGreaterThan(before!.updated_at.getTime());
    expect(await call('GET', `${base}/v1/user/1`)).toMatchObject({
      body: { id: 1, name: 'alicia' },
    });
  });

  it('POST and DELETE of a missing user answer 404 with the JSON string "user not found"', async () => {
    const { base } = await startDemo();
    for (const method of ['POST', 'DELETE']) {
      const res = await call(method, `${base}/v1/user/7${method === 'POST' ? '?name=x' : ''}`);
      expect(res).toMatchObject({ status: 404, text: '"user not found"' });
      expect(res.type).toContain('application/json');
    }
  });

  it('DELETE soft-deletes: plain text success, the row stays with deleted_at, and both GETs stop showing it', async () => {
    const { base, database } = await startDemo();
    await call('PUT', `${base}/v1/user?name=alice`);
    await call('PUT', `${base}/v1/user?name=bob`);
    const res = await call('DELETE', `${base}/v1/user/1`);
    expect(res).toMatchObject({ status: 200, text: 'success' });
    expect(res.type).toContain('text/plain');
    const rows = await admin<{ id: number; deleted_at: Date | null }>(
      SHARED,
      database,
      'SELECT id, deleted_at FROM users ORDER BY id',
    );
    expect(rows[0]!.deleted_at).toBeInstanceOf(Date);
    expect(rows[1]!.deleted_at).toBeNull();
    expect(await call('GET', `${base}/v1/user`)).toMatchObject({ body: [{ id: 2, name: 'bob' }] });
    expect(await call('GET', `${base}/v1/user/1`)).toMatchObject({
      status: 200,
      body: { id: 0, name: '' },
    });
    expect(await call('DELETE', `${base}/v1/user/1`)).toMatchObject({
      status: 404,
      body: 'user not found',
    });
    expect(await call('POST', `${base}/v1/user/1?name=zombie`)).toMatchObject({
      status: 404,
      body: 'user not found',
    });
  });

  it('answers 400 with a clear message for a non-integer id or a missing name', async () => {
    const { base } = await startDemo();
    for (const [method, url] of [
      ['GET', '/v1/user/abc'],
      ['POST', '/v1/user/1.5?name=x'],
      ['DELETE', '/v1/user/99999999999'],
    ] as const) {
      const res = await call(method, `${base}${url}`);
      expect(res.status, `${method} ${url}`).toBe(400);
      expect(res.body).toMatch(/^id must be an integer up to 2147483647, got "/);
    }
    expect(await call('PUT', `${base}/v1/user`)).toMatchObject({
      status: 400,
      body: 'query parameter "name" is required',
    });
    expect(await call('POST', `${base}/v1/user/1`)).toMatchObject({
      status: 400,
      body: 'query parameter "name" is required',
    });
    expect(await call('PUT', `${base}/v1/user?name=a&name=b`)).toMatchObject({
      status: 400,
      body: 'query parameter "name" must be given once',
    });
  });

  it('answers 500 with the database error as JSON on every route', async () => {
    const { base, database } = await startDemo();
    await admin(SHARED, database, 'ALTER TABLE users RENAME TO users_gone');
    for (const [method, url] of [
      ['GET', '/v1/user'],
      ['GET', '/v1/user/1'],
      ['PUT', '/v1/user?name=a'],
      ['POST', '/v1/user/1?name=a'],
      ['DELETE', '/v1/user/1'],
    ] as const) {
      expect(await call(method, `${base}${url}`), `${method} ${url}`).toMatchObject({
        status: 500,
        body: { error: 'relation "users" does not exist' },
      });
    }
  });

  it('in dryRun runs no migration and sends no statement: reads are empty, writes find no row', async () => {
    const { base, database } = await startDemo({
      edit: (yaml) => yaml.replace('dryRun: false', 'dryRun: true'),
    });
    expect(
      await admin(SHARED, database, "SELECT 1 FROM pg_tables WHERE tablename = 'users'"),
    ).toEqual([]);
    expect(await call('GET', `${base}/v1/user`)).toMatchObject({ status: 200, body: [] });
    expect(await call('GET', `${base}/v1/user/1`)).toMatchObject({
      status: 200,
      body: { id: 0, name: '' },
    });
    expect(await call('POST', `${base}/v1/user/1?name=x`)).toMatchObject({
      status: 404,
      body: 'user not found',
    });
    // INSERT … RETURNING returns no row in a dry run.
    expect(await call('PUT', `${base}/v1/user?name=x`)).toMatchObject({
      status: 500,
      body: { error: 'no result' },
    });
  });
});

describe('demo-sql when PostgreSQL restarts', () => {
  it('answers 500 during the outage and recovers without an app restart', async () => {
    const server = await startPrivatePostgres();
    cleanups.push(() => server.remove());
    const { base } = await startDemo({ addr: server.addr });
    expect(await call('PUT', `${base}/v1/user?name=survivor`)).toMatchObject({
      status: 200,
      body: { id: 1, name: 'survivor' },
    });
    await server.stop();
    const outage = await waitFor('a 500 while PostgreSQL is down', async () => {
      const res = await call('GET', `${base}/v1/user`);
      return res.status === 500 ? res : undefined;
    });
    expect(outage.body).toEqual({ error: expect.stringMatching(/ECONNREFUSED|terminat|connect/i) });
    expect(await call('PUT', `${base}/v1/user?name=lost`)).toMatchObject({ status: 500 });
    await server.start();
    const back = await waitFor(
      'the demo to answer from the restarted server',
      async () => {
        const res = await call('GET', `${base}/v1/user`);
        return res.status === 200 ? res : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(back.body).toEqual([{ id: 1, name: 'survivor' }]);
    expect(await call('PUT', `${base}/v1/user?name=after`)).toMatchObject({
      status: 200,
      body: { name: 'after' },
    });
  });
});
