import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, plainEnv, sigtermUnderKeepAliveLoad, startOnFreePort } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

function get(port: number, p: string): Promise<{ status: number; pid?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const pid = res.headers['x-worker-pid'];
        resolve({ status: res.statusCode ?? 0, body, ...(typeof pid === 'string' ? { pid } : {}) });
      });
    });
    req.on('error', reject);
  });
}

describe('httpserver with app.workers: 2', () => {
  it('serves from both workers on one port, sums the call metrics over them, and loses no request on 8 keep-alive connections when the primary gets SIGTERM; exits 0', async () => {
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
        children.push(child);
        return child;
      },
      {
        what: 'both workers to be ready',
        ready: (child) => child.stdout.includes('All 2 workers are ready'),
        timeoutMs: 60_000,
      },
    );

    const pids = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const r = await get(port, '/v1/ok');
      expect(r.status).toBe(200);
      pids.add(r.pid!);
    }
    expect(pids.size).toBe(2);
    const metrics = (await get(port, '/metrics')).body;
    const counted = [...metrics.matchAll(/^svc_call_res_code_total\{[^}]*\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    expect(counted, metrics.slice(0, 2000)).toBe(10);

    const r = await sigtermUnderKeepAliveLoad(child, { port, path: '/v1/ok', connections: 8 });
    const summary = JSON.stringify({
      failures: r.failures.slice(0, 10),
      readiness: r.readiness,
      stdout: child.stdout.slice(-2000),
      stderr: child.stderr.slice(-1000),
    });
    expect(r.failures, summary).toEqual([]);
    expect(r.readiness, summary).toBe(503);
    // Each connection was answered after the signal and closed by its server.
    for (let w = 0; w < 8; w++) {
      const after = r.outcomes.filter((o) => o.worker === w && o.answeredAfterSignal === true);
      expect(after.length, `connection ${w}: ${summary}`).toBeGreaterThan(0);
      expect(after.at(-1)?.connection, `connection ${w}`).toBe('close');
    }
    expect(r.exitCode, summary).toBe(0);
    expect(child.stdout).toMatch(/Worker 1 \(pid \d+\) stopped \(code 0\)/);
    expect(child.stdout).toMatch(/Worker 2 \(pid \d+\) stopped \(code 0\)/);
  }, 120_000);
});
