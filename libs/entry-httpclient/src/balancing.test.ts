import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { boot, type App } from '@svcboot/entry-core';
import { DnsServer, waitFor } from '@svcboot/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { httpClient } from './index.js';

/** A replica on `host:port` that answers its name and the Host header it got. */
async function replica(name: string, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ replica: name, host: req.headers.host }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}

describe('httpclient loadBalancing: round_robin', () => {
  const cleanup: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('spreads calls over every address of the host, finds a new one on its interval, skips one that stops', async () => {
    const dns = await DnsServer.start();
    cleanup.push(() => dns.close());
    const a = await replica('a', '127.0.0.1', 0);
    cleanup.push(() => a.close());
    const port = (a.address() as AddressInfo).port;
    // The second replica on the same port of another loopback address: a pod of the same service.
    const b = await replica('b', '127.0.0.2', port);
    cleanup.push(() => b.close());
    dns.set('billing.svc.test', ['127.0.0.1']);

    const app: App = await boot({
      configText: `app: { name: caller }
logger: [{ name: quiet, level: error }]
httpclient:
  - name: billing
    baseUrl: http://billing.svc.test:${port}
    loadBalancing: round_robin
    dnsServer: 127.0.0.1:${dns.port}
    resolveIntervalMs: 200
    timeoutMs: 5000
    retry: { maxAttempts: 3, initialBackoffMs: 5, maxBackoffMs: 20 }
`,
      argv: [],
      env: {},
    });
    cleanup.push(() => app.shutdown('test'));
    await app.bootstrap();
    const client = httpClient(app, 'billing');
    const seen: string[] = [];
    const call = async (): Promise<void> => {
      const res = await client.fetch('/v1/x');
      expect(res.status).toBe(200);
      const body = (await res.json()) as { replica: string; host: string };
      // The backend sees the URL's host, not the address.
      expect(body.host).toBe(`billing.svc.test:${port}`);
      seen.push(body.replica);
    };
    for (let i = 0; i < 3; i++) await call();
    expect(new Set(seen)).toEqual(new Set(['a']));

    // b appears in DNS: the next resolution adds it, and calls alternate, sequential as they are
    // (one keep-alive connection would carry them all to one address).
    dns.set('billing.svc.test', ['127.0.0.1', '127.0.0.2']);
    await waitFor('the client to resolve again', () => client.addresses.length === 2, {
      timeoutMs: 20_000,
    });
    seen.length = 0;
    for (let i = 0; i < 6; i++) await call();
    expect(seen.filter((r) => r === 'a').length).toBe(3);
    expect(seen.filter((r) => r === 'b').length).toBe(3);

    // b stops (still in DNS): its connection attempt fails, the call is retried on a, and b is
    // skipped afterwards: no call fails.
    await new Promise<void>((resolve) => {
      b.close(() => resolve());
      b.closeAllConnections();
    });
    seen.length = 0;
    for (let i = 0; i < 6; i++) await call();
    expect(new Set(seen)).toEqual(new Set(['a']));
  });
});
