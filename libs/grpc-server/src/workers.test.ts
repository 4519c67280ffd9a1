import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, credentials } from '@grpc/grpc-js';
import { Child, plainEnv, startOnFreePort } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { libraryDefinition } from './test-support/library-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** One Ping on a channel of its own (its own HTTP/2 connection): the answering worker's pid. */
async function pingOnNewChannel(port: number): Promise<string> {
  const ping = libraryDefinition()['Ping']!;
  // Without a local subchannel pool, grpc-js would share one connection between clients.
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
  try {
    return await new Promise<string>((resolve, reject) =>
      client.makeUnaryRequest(
        ping.path,
        ping.requestSerialize,
        ping.responseDeserialize,
        { text: 'x' },
        (err, value) => (err ? reject(err) : resolve(String((value as { text: string }).text))),
      ),
    );
  } finally {
    client.close();
  }
}

function get(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const total = (metrics: string, family: string): number =>
  [...metrics.matchAll(new RegExp(`^${family}\\{[^}]*\\} (\\d+)$`, 'gm'))].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );

describe('grpc entry with app.workers: 2', () => {
  it('shares its one port between the workers for gRPC (grpc-js HTTP/2) and the gateway, sums /metrics over them, and exits 0 on SIGTERM', async () => {
    const { child, port } = await startOnFreePort(
      (port) => {
        const child = Child.start(
          process.execPath,
          [
            '--conditions=svcboot-source',
            '--import',
            'tsx',
            path.join(here, 'test-support/workers-app.ts'),
          ],
          { cwd: path.join(here, '..'), env: plainEnv({ PORT: String(port) }) },
        );
        cleanups.push(() => child.kill());
        return child;
      },
      {
        what: 'both workers to be ready',
        ready: (child) => child.stdout.includes('All 2 workers are ready'),
        timeoutMs: 60_000,
      },
    );
    const workers = new Set(
      [...child.stdout.matchAll(/Worker \d \(pid (\d+)\) is ready/g)].map((m) => m[1]),
    );
    expect(workers.size).toBe(2);

    const grpcPids = new Set<string>();
    for (let i = 0; i < 8; i++) grpcPids.add(await pingOnNewChannel(port));
    expect(grpcPids).toEqual(workers);

    const gatewayPids = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const r = await get(port, '/v1/shelves/s1');
      expect(r.status, r.body).toBe(200);
      gatewayPids.add((JSON.parse(r.body) as { name: string }).name);
    }
    expect(gatewayPids).toEqual(workers);

    // 8 gRPC calls and 8 gateway calls, counted by two workers, summed by either.
    for (let i = 0; i < 2; i++) {
      const metrics = (await get(port, '/metrics')).body;
      expect(total(metrics, 'grpc_server_handled_total'), metrics.slice(0, 3000)).toBe(16);
    }

    child.process.kill('SIGTERM');
    expect(await child.waitForExit(30_000)).toBe(0);
    expect(child.stdout).toMatch(/Worker 1 \(pid \d+\) stopped \(code 0\)/);
    expect(child.stdout).toMatch(/Worker 2 \(pid \d+\) stopped \(code 0\)/);
  }, 120_000);
});
