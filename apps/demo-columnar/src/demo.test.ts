import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@svcboot/testkit';
import { DemoProcess } from './test-support/demo-process.js';
import { PrivateClickHouse } from '@svcboot/testkit';

const SHARED_ADDR = process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A statement over ClickHouse's HTTP interface, for checking and cleaning up behind the demo. */
async function clickhouse(addr: string, statement: string): Promise<string> {
  const res = await fetch(`http://${addr}/`, { method: 'POST', body: statement });
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return text.trim();
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The demo against a fresh database (dropped after the test). */
async function startDemo(
  extraEnv: Record<string, string> = {},
  addr = SHARED_ADDR,
): Promise<{ demo: DemoProcess; db: string }> {
  const db = `svcboot_demo_${randomBytes(5).toString('hex')}`;
  cleanups.push(() => clickhouse(addr, `DROP DATABASE IF EXISTS ${db}`).catch(() => undefined));
  const demo = await DemoProcess.start({ CLICKHOUSE_ADDR: addr, CLICKHOUSE_DB: db, ...extraEnv });
  cleanups.push(() => demo.stop());
  return { demo, db };
}

type User = { id: string; name: string };

/** For comparing lists without depending on the order (created_at has whole seconds). */
function sortUsers(users: User[]): User[] {
  return [...users].sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('demo-columnar (ARCHITECTURE.md §7) against ClickHouse', () => {
  it('creates its database and user table at start', async () => {
    const { db } = await startDemo();
    expect(await clickhouse(SHARED_ADDR, `EXISTS TABLE ${db}.users`)).toBe('1');
    expect(
      await clickhouse(
        SHARED_ADDR,
        `SELECT engine FROM system.tables WHERE database = '${db}' AND name = 'users'`,
      ),
    ).toBe('ReplacingMergeTree');
  });

  it('answers every row of the table', async () => {
    const { demo } = await startDemo();
    const name = "Zoë 'O\"Brien' \\ 😀";

    // PUT /v1/user: a new string id.
    const put = await demo.call('PUT', `/v1/user?name=${encodeURIComponent(name)}`);
    expect(put.status).toBe(200);
    expect(put.type).toContain('application/json');
    const user = put.body as User;
    expect(Object.keys(user).sort()).toEqual(['id', 'name']);
    expect(user.id).toMatch(UUID);
    expect(user.name).toBe(name);
    const other = (await demo.call('PUT', '/v1/user?name=second')).body as User;
    expect(other.id).not.toBe(user.id);

    // GET /v1/user: an array of users, timestamps hidden.
    const list = await demo.call('GET', '/v1/user');
    expect(list.status).toBe(200);
    expect(sortUsers(list.body as User[])).toEqual(sortUsers([user, other]));

    // GET /v1/user/:id, and an unknown id: 200 with an empty-valued user, never 404.
    expect(await demo.call('GET', `/v1/user/${user.id}`)).toMatchObject({
      status: 200,
      body: user,
    });
    expect(await demo.call('GET', '/v1/user/no-such-id')).toMatchObject({
      status: 200,
      body: { id: '', name: '' },
    });

    // POST /v1/user/:id: the given id and the new name.
    expect(await demo.call('POST', `/v1/user/${user.id}?name=renamed`)).toMatchObject({
      status: 200,
      body: { id: user.id, name: 'renamed' },
    });
    expect((await demo.call('GET', `/v1/user/${user.id}`)).body).toEqual({
      id: user.id,
      name: 'renamed',
    });
    // A missing id: still 200 with the given id and name, and no row appears.
    expect(await demo.call('POST', '/v1/user/ghost?name=boo')).toMatchObject({
      status: 200,
      body: { id: 'ghost', name: 'boo' },
    });
    expect((await demo.call('GET', '/v1/user/ghost')).body).toEqual({ id: '', name: '' });

    // DELETE /v1/user/:id: plain text "success", also for a missing id.
    const del = await demo.call('DELETE', `/v1/user/${user.id}`);
    expect(del).toMatchObject({ status: 200, body: 'success' });
    expect(del.type).toContain('text/plain');
    expect((await demo.call('GET', `/v1/user/${user.id}`)).body).toEqual({ id: '', name: '' });
    expect(await demo.call('DELETE', '/v1/user/ghost')).toMatchObject({
      status: 200,
      body: 'success',
    });
    // A deleted user stays deleted: renaming it does not bring it back.
    expect((await demo.call('POST', `/v1/user/${user.id}?name=zombie`)).status).toBe(200);
    expect((await demo.call('GET', '/v1/user')).body).toEqual([other]);
  });

  it('reads its own writes under interleaved requests', async () => {
    const { demo } = await startDemo();
    const lifecycles = Array.from({ length: 12 }, async (_, i) => {
      const created = (await demo.call('PUT', `/v1/user?name=user-${i}`)).body as User;
      expect((await demo.call('GET', `/v1/user/${created.id}`)).body).toEqual(created);
      for (let round = 0; round < 3; round++) {
        const name = `user-${i}-r${round}`;
        expect((await demo.call('POST', `/v1/user/${created.id}?name=${name}`)).body).toEqual({
          id: created.id,
          name,
        });
        expect((await demo.call('GET', `/v1/user/${created.id}`)).body).toEqual({
          id: created.id,
          name,
        });
        const all = (await demo.call('GET', '/v1/user')).body as User[];
        expect(all).toContainEqual({ id: created.id, name });
      }
      if (i % 2 === 0) {
        expect((await demo.call('DELETE', `/v1/user/${created.id}`)).body).toBe('success');
        expect((await demo.call('GET', `/v1/user/${created.id}`)).body).toEqual({
          id: '',
          name: '',
        });
        const all = (await demo.call('GET', '/v1/user')).body as User[];
        expect(all.map((u) => u.id)).not.toContain(created.id);
      }
      return created.id;
    });
    const ids = await Promise.all(lifecycles);
    const survivors = ((await demo.call('GET', '/v1/user')).body as User[]).map((u) => u.id).sort();
    expect(survivors).toEqual(ids.filter((_, i) => i % 2 === 1).sort());
  });

  it('with dryRun, creates no table and answers empty results', async () => {
    const { demo, db } = await startDemo({ CLICKHOUSE_DRY_RUN: 'true' });
    expect(
      await clickhouse(SHARED_ADDR, `SELECT count() FROM system.databases WHERE name = '${db}'`),
    ).toBe('0');
    expect(await demo.call('GET', '/v1/user')).toMatchObject({ status: 200, body: [] });
    expect((await demo.call('PUT', '/v1/user?name=x')).status).toBe(200);
    expect((await demo.call('GET', '/v1/user')).body).toEqual([]);
  });

  it('fails to start, naming the address and cause, when ClickHouse is not there', async () => {
    const err = await DemoProcess.start({
      CLICKHOUSE_ADDR: '127.0.0.1:1',
      CLICKHOUSE_PASS: 'pw-not-shown',
    }).then(
      (demo) => demo.stop().then(() => undefined),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    const text = String(err?.message);
    expect(text).toContain('the child exited (1) before listening');
    expect(text).toContain(
      'columnardb[clickhouse]: cannot connect to the server at 127.0.0.1:1 as user "default"',
    );
    expect(text).toContain('ECONNREFUSED');
    expect(text).not.toContain('pw-not-shown');
  });
});

describe('demo-columnar when its ClickHouse stops and comes back', () => {
  let server: PrivateClickHouse | undefined;
  afterAll(async () => {
    await server?.destroy();
  });

  it('answers 500 with the error as JSON while the server is down, and recovers without a restart', async () => {
    server = await PrivateClickHouse.create();
    await server.start();
    const { demo } = await startDemo({}, server.addr);
    const user = (await demo.call('PUT', '/v1/user?name=before')).body as User;

    await server.stop();
    for (const [method, p] of [
      ['GET', '/v1/user'],
      ['GET', `/v1/user/${user.id}`],
      ['PUT', '/v1/user?name=during'],
      ['POST', `/v1/user/${user.id}?name=during`],
      ['DELETE', `/v1/user/${user.id}`],
    ] as const) {
      const res = await demo.call(method, p);
      expect(res.status, `${method} ${p}`).toBe(500);
      expect(res.type).toContain('application/json');
      expect((res.body as { error: string }).error).toMatch(
        /columnardb\[clickhouse\] database "svcboot_demo_\w+": .*ECONNREFUSED|socket|connect/,
      );
    }

    await server.start();
    const back = await waitFor(
      'the demo to answer 200 again',
      async () => {
        const res = await demo.call('GET', `/v1/user/${user.id}`);
        return res.status === 200 ? res : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(back.body).toEqual(user);
    const after = (await demo.call('PUT', '/v1/user?name=after')).body as User;
    expect(sortUsers((await demo.call('GET', '/v1/user')).body as User[])).toEqual(
      sortUsers([user, after]),
    );
  });
});
