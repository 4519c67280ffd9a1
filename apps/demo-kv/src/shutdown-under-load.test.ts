import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Child,
  drainViolations,
  HttpLoad,
  plainEnv,
  RawHttpConnection,
  sigtermAndAskReadiness,
  startOnFreePort,
  summarizeOutcomes,
  waitFor,
} from '@svcboot/testkit';
import { redisCli } from '@svcboot/testkit';
import { demoDir } from './test-support/demo-app.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Deletes every Redis key of this test (the load writes thousands). */
async function deleteKeys(prefix: string): Promise<void> {
  const keys = (await redisCli(6379, ['--scan', '--pattern', `${prefix}*`]))
    .split('\n')
    .filter(Boolean);
  for (let i = 0; i < keys.length; i += 500)
    await redisCli(6379, ['del', ...keys.slice(i, i + 500)]);
}

const setHead = (port: number, length: number): string =>
  `POST /v1/set HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

describe('demo-kv: graceful shutdown under load (src/main.ts as a child process)', () => {
  /*
   * What is asserted, and how it is observed without timing:
   * - "Accepted" means the server read a request's headers and started it: every request of
   *   the load and the held ones carry `Expect: 100-continue` and send their body only after
   *   the server's `100 Continue`. Each request whose 100 Continue arrived before SIGTERM was
   *   sent must end in 200 (no reset, no 5xx), and so must any accepted after it.
   * - In flight across the signal: three held requests are accepted before SIGTERM and send
   *   their body only after it; they must complete with 200 and their values be in Redis.
   * - Readiness first: the listener stops accepting in the same step that readiness turns
   *   false, so /readyz cannot be asked on a new connection during the drain. It is asked on a
   *   connection opened before the signal, with the request line already sent (the server has
   *   begun that request, so the drain neither closes it as idle nor waits less for it) and
   *   the header block finished once the demo has logged "Shutdown begins": the answer must be 503 "not ready", while the
   *   process is still up and before the held requests are released.
   * - Exit: the process exits with code 0 within the shutdown timeout (polled, 20 s deadline).
   */
  it('finishes every request accepted before SIGTERM, answers /readyz 503 while draining, and exits 0', async () => {
    const prefix = `svcboot-demo-kv-shutdown:${randomUUID()}:`;
    cleanups.push(() => deleteKeys(prefix));
    const { child, port } = await startOnFreePort(
      (port) => {
        const child = Child.start(
          process.execPath,
          ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
          {
            cwd: demoDir,
            env: plainEnv({ PORT: String(port), REDIS_ADDR: '127.0.0.1:6379' }),
          },
        );
        cleanups.push(async () => child.kill());
        return child;
      },
      { what: 'the demo to listen', timeoutMs: 30_000 },
    );

    // The readiness probe: request line and a header now, the end of the header block after SIGTERM.
    const probe = await RawHttpConnection.begin(port, 'GET /readyz');
    cleanups.push(async () => probe.destroy());

    // Held requests: accepted (100 Continue) before the signal, body sent after it.
    const held: Array<{ conn: RawHttpConnection; key: string; body: string }> = [];
    for (let i = 0; i < 3; i++) {
      const conn = await RawHttpConnection.open(port);
      cleanups.push(async () => conn.destroy());
      const key = `${prefix}held-${i}`;
      const body = JSON.stringify({ key, value: `held value ${i}` });
      await conn.write(setHead(port, Buffer.byteLength(body)));
      expect((await conn.nextResponse()).status).toBe(100);
      held.push({ conn, key, body });
    }

    const load = new HttpLoad({
      port,
      path: '/v1/set',
      body: (i) => JSON.stringify({ key: `${prefix}${i}`, value: `v${i}` }),
      concurrency: 8,
      maxRequests: 50_000,
    }).start();
    cleanups.push(() => load.stop());
    await waitFor('the load to get 300 answers', () => load.answered >= 300, { timeoutMs: 30_000 });

    load.markSignal();
    const { ready, runningWhenAnswered } = await sigtermAndAskReadiness(child, probe, port);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'not ready' });
    // Still draining when it answered: the held requests keep it up.
    expect(runningWhenAnswered).toBe(true);

    for (const h of held) {
      await h.conn.write(h.body);
      const res = await h.conn.nextResponse();
      expect(res.status, h.key).toBe(200);
    }
    for (const [i, h] of held.entries())
      expect(await redisCli(6379, ['get', h.key])).toBe(`held value ${i}`);

    const outcomes = await load.finished();
    expect(await child.waitForExit(20_000), child.stdout + child.stderr).toBe(0);
    expect(child.stdout).toContain('Shutdown complete');
    expect(child.stdout).not.toContain('Shutdown complete, with errors');

    const summary = JSON.stringify(summarizeOutcomes(outcomes));
    expect(outcomes.filter((o) => o.acceptedBeforeSignal).length, summary).toBeGreaterThanOrEqual(
      300,
    );
    // Every accepted request (before the signal, or after it on a connection still draining)
    // completed with 200; nothing was answered with an error status; what failed failed at the
    // connection, unaccepted.
    expect(
      drainViolations(outcomes, (o) => o.status === 200),
      summary,
    ).toEqual([]);
    // Accepted requests really ran: the values of the last ten accepted are in Redis.
    for (const o of outcomes.filter((x) => x.accepted).slice(-10)) {
      expect(await redisCli(6379, ['get', `${prefix}${o.index}`])).toBe(`v${o.index}`);
    }
  });
});
