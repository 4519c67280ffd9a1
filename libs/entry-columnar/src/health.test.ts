import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@svcboot/testkit';
import { columnarEntry } from './index.js';
import { bootYaml, tempDir } from './test-support/clickhouse.js';

/**
 * A stand-in for ClickHouse's HTTP interface, enough for bootstrap (`SELECT version()`, the bind
 * mode check) and `/ping`: the health probe is about the server answering at all, which stopping
 * this one shows without stopping a real server other tests share.
 */
function fakeClickHouse(port: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/ping')) {
      res.end('Ok.\n');
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const q = `${decodeURIComponent(req.url ?? '')} ${body}`;
      res.setHeader('Content-Type', 'application/x-ndjson');
      res.end(q.includes('{probe:UInt8}') ? '{"probe":7}\n' : '{"version":"24.8.1"}\n');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      }),
    );
  });
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('columnardb health (entry-core Entry.backendHealth)', () => {
  it('is down for readiness while the server does not answer /ping, and up once it does again', async () => {
    // Port 0: the OS picks; the server comes back on the same port further down.
    let server = await fakeClickHouse(0);
    const port = server.port;
    cleanups.push(() => server.close());
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const app = await bootYaml(
      `columnardb:\n  - name: ch\n    enabled: true\n    addr: 127.0.0.1:${port}\n    healthCheckIntervalMs: 100\n    database:\n      - name: default\n`,
      tmp.dir,
    );
    cleanups.push(() => app.shutdown());
    await app.bootstrap();
    const entry = columnarEntry(app, 'ch');
    expect(entry.readinessCheck).toBe(true);
    expect(app.dependenciesDown('readiness')).toEqual([]);

    await server.close();
    await waitFor('the probe to see the server down', () => !entry.backendHealth().ok);
    expect(app.dependenciesDown('readiness')).toEqual([
      { entry: 'ch', kind: 'columnardb', detail: expect.stringMatching(/^probe failed \(\w+\)$/) },
    ]);

    server = await fakeClickHouse(port);
    await waitFor('the probe to see the server back', () => entry.backendHealth().ok);
    expect(app.dependenciesDown('readiness')).toEqual([]);
  });
});
