import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BootstrapError } from '@svcboot/entry-core';
import { freePort, waitFor } from '@svcboot/testkit';
import { kvEntry } from './index.js';
import { startRedis, type RedisProcess } from '@svcboot/testkit';
import { bootWithLogs, type LoggedApp } from './test-support/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function bootKv(items: Array<Record<string, unknown>>): Promise<LoggedApp> {
  const logged = await bootWithLogs({ kvstore: items });
  cleanups.push(logged.cleanup);
  return logged;
}

function appLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('single node (127.0.0.1:6379)', () => {
  it('connects, logs the ping with its client type, serves commands and quits at shutdown', async () => {
    const prefix = `svcboot-kv-test:${randomUUID()}:`;
    const { app, appLog, records } = await bootKv([{ name: 'redis', addrs: ['127.0.0.1:6379'] }]);
    const entry = kvEntry(app, 'redis');
    expect(entry.mode).toBe('single');
    await app.bootstrap();
    const client = entry.redis();
    await client.set(`${prefix}k`, 'v', 'EX', 30);
    expect(await entry.client.get(`${prefix}k`)).toBe('v');
    await client.del(`${prefix}k`);
    await app.shutdown();
    expect(client.status).toBe('end');

    const ping = appLines(await appLog()).find(
      (l) => l['msg'] === 'Ping redis at [127.0.0.1:6379] success',
    );
    expect(ping).toMatchObject({ entryName: 'redis', clientType: 'single', level: 'info' });
    const rec = await records();
    expect(rec).toContain('"entryType":"KvEntry"');
    expect(rec).toContain('payloads={"redisAddrs":["127.0.0.1:6379"],"clientType":"single"}');
    expect(rec).toMatch(/operation=Bootstrap\nresCode=OK/);
  });

  it('shutdown QUITs: a command still running on the server gets its reply', async () => {
    // A server of its own: the slow script blocks it for 300 ms.
    const server = await startRedis();
    cleanups.push(() => server.stop());
    const { app } = await bootKv([{ name: 'redis', addrs: [server.addr] }]);
    await app.bootstrap();
    const client = kvEntry(app, 'redis').redis();
    const busy =
      "local t0 = redis.call('TIME') repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 300000 return 'done'";
    const slow = client.eval(busy, 0);
    const after = client.set('after-slow', 'v');
    // ioredis has written both commands to the socket by now (the connection is ready).
    const stopped = app.shutdown();
    expect(await slow).toBe('done');
    expect(await after).toBe('OK');
    expect(await stopped).toBe(true);
    expect(client.status).toBe('end');
  });

  it('logs a lost connection once and its return, and reconnects by itself', async () => {
    const server = await startRedis();
    cleanups.push(() => server.stop());
    const { app, appLog } = await bootKv([{ name: 'flaky', addrs: [server.addr] }]);
    await app.bootstrap();
    const client = kvEntry(app, 'flaky').redis();
    await server.kill();
    await expect(client.get('k')).rejects.toThrow();
    const again = await startRedis({ port: server.port });
    cleanups.push(() => again.stop());
    await waitFor(
      'the client to reconnect',
      async () => (await client.ping().catch(() => '')) === 'PONG',
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    await app.shutdown();
    const lines = appLines(await appLog()).map((l) => String(l['msg']));
    expect(
      lines.filter((m) => m.startsWith(`Redis connection lost at [${server.addr}]`)),
    ).toHaveLength(1);
    expect(lines).toContain(`Redis connection back at [${server.addr}]`);
  });

  it('uses the configured db', async () => {
    const prefix = `svcboot-kv-test:${randomUUID()}:`;
    const { app } = await bootKv([{ name: 'redis', addrs: ['127.0.0.1:6379'], db: 3 }]);
    await app.bootstrap();
    const client = kvEntry(app, 'redis').redis();
    await client.set(`${prefix}db`, '3', 'EX', 30);
    const other = kvEntry(app, 'redis').redis().duplicate({ db: 0 });
    try {
      expect(await other.get(`${prefix}db`)).toBeNull();
    } finally {
      other.disconnect();
    }
    expect(await client.get(`${prefix}db`)).toBe('3');
    await client.del(`${prefix}db`);
  });

  it('fails bootstrap on a refused address at once, naming entry, mode, address and cause', async () => {
    const port = await freePort();
    const { app, appLog } = await bootKv([
      { name: 'down', addrs: [`127.0.0.1:${port}`], dialTimeoutMs: 1500, pass: 'Sup3r-Secret-Pw' },
    ]);
    const err = await app.bootstrap().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BootstrapError);
    expect(((err as Error).cause as { code?: string }).code).toBe('SVC_KV_UNREACHABLE');
    const message = (err as Error).message;
    expect(message).toContain(`kvstore[down]: cannot reach redis (single) at [127.0.0.1:${port}]`);
    expect(message).toContain('ECONNREFUSED');
    expect(message).not.toContain('Sup3r-Secret-Pw');
    await app.shutdown();
    expect(await appLog()).not.toContain('Sup3r-Secret-Pw');
  });

  it('fails at dialTimeoutMs when the address accepts but never answers', async () => {
    // A redis-server stopped with SIGSTOP accepts TCP connections (the kernel does) but never replies.
    const server = await startRedis();
    cleanups.push(() => server.stop());
    process.kill(server.pid, 'SIGSTOP');
    cleanups.push(async () => void process.kill(server.pid, 'SIGCONT'));
    const { app } = await bootKv([{ name: 'mute', addrs: [server.addr], dialTimeoutMs: 800 }]);
    const err = await app.bootstrap().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      new RegExp(
        `kvstore\\[mute\\]: cannot reach redis \\(single\\) at \\[${server.addr}\\]: .*800 ms`,
      ),
    );
  });
});

describe('password', () => {
  let server: RedisProcess;
  const password = 'Very-Secret-Pw-8731';
  beforeAll(async () => {
    server = await startRedis({ args: ['--requirepass', password], password });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('authenticates with pass, and never shows it', async () => {
    const { app, appLog, records } = await bootKv([
      { name: 'auth', addrs: [server.addr], pass: password },
    ]);
    await app.bootstrap();
    expect(await kvEntry(app, 'auth').client.ping()).toBe('PONG');
    await app.shutdown();
    const out = (await appLog()) + (await records());
    expect(out).toContain('Ping redis at');
    expect(out).not.toContain(password);
  });

  it('a wrong pass fails bootstrap with the cause and without the password', async () => {
    const wrong = 'Wrong-Pw-55120';
    const { app, appLog, records } = await bootKv([
      { name: 'auth', addrs: [server.addr], pass: wrong, dialTimeoutMs: 1500 },
    ]);
    const err = await app.bootstrap().catch((e: unknown) => e);
    const message = (err as Error).message;
    expect(message).toContain(`kvstore[auth]: cannot reach redis (single) at [${server.addr}]`);
    expect(message).toMatch(/WRONGPASS|invalid username-password/);
    expect(message).toContain('user and pass');
    await app.shutdown();
    const out = message + (await appLog()) + (await records());
    expect(out).not.toContain(wrong);
  });
});
