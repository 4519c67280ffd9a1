import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { Child, freePort, plainEnv, startOnFreePorts, waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/*
 * A Deployment's rolling update, simulated on one machine. HAProxy (Debian's package) stands in
 * for the Kubernetes Service: an L4 (TCP) balancer over the demo's port that health-checks
 * `GET /readyz` on every replica, as the endpoints controller follows the readiness probe. Three
 * replicas of demo-grpc serve a steady load of gRPC Hello calls (grpc-js channels) and REST
 * `GET /v1/hello` calls (Node's http.Agent, keep-alive) through it. Each replica is replaced the
 * way a Deployment with maxSurge 1 / maxUnavailable 0 does: start the new one, wait until the
 * balancer sees it ready, SIGTERM the old one (default drain: /readyz 503 for 5 s, then the
 * entry stops), wait for it to exit 0. Every call of the load must succeed.
 *
 * SVC_SKIP_HAPROXY=1 skips it (vitest shows it as skipped); otherwise a machine without haproxy
 * fails it, saying what to install (`npm test` installs it: tools/scripts/tools.sh).
 * ROLLING_ROUNDS=n repeats the roll n times (a longer run; 1 by default).
 */

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function haproxyPath(): string {
  for (const p of ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy']) {
    try {
      execFileSync(p, ['-v'], { stdio: 'ignore' });
      return p;
    } catch {
      // not there
    }
  }
  throw new Error(
    'haproxy is not installed (looked in /usr/sbin, /usr/bin, /usr/local/sbin): install it (`apt-get install haproxy` on Debian, or tools/scripts/tools.sh), or set SVC_SKIP_HAPROXY=1 to skip this test',
  );
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Slot {
  name: string;
  port: number;
}

/** The balancer's view of each server: `UP`, `DOWN`, … from its CSV stats page. */
async function serverStates(statsPort: number): Promise<Map<string, string>> {
  const csv = await new Promise<string>((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port: statsPort, path: '/stats;csv', agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
  });
  const states = new Map<string, string>();
  for (const line of csv.split('\n')) {
    const cols = line.split(',');
    // pxname,svname,…; status is column 18 (0-based 17).
    if (cols[0] === 'demo' && cols[1] && !['FRONTEND', 'BACKEND'].includes(cols[1]))
      states.set(cols[1], cols[17] ?? '');
  }
  return states;
}

function startReplica(slot: Slot): Child {
  const child = Child.start(
    process.execPath,
    ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
    { cwd: appDir, env: plainEnv({ PORT: String(slot.port) }) },
  );
  cleanups.push(() => child.kill());
  return child;
}

interface Tally {
  ok: number;
  failed: Map<string, number>;
}
const fail = (t: Tally, why: string): void => {
  t.failed.set(why, (t.failed.get(why) ?? 0) + 1);
};

/** gRPC Hello in a loop on each of `n` channels until `stop`. */
function grpcLoad(port: number, n: number, tally: Tally, stop: () => boolean): Promise<void>[] {
  return Array.from({ length: n }, async () => {
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    try {
      while (!stop()) {
        await new Promise<void>((resolve) => {
          client.makeUnaryRequest(
            '/api.v1.Greeter/Hello',
            (b: Buffer) => b,
            (b: Buffer) => b,
            Buffer.alloc(0),
            new Metadata(),
            { deadline: Date.now() + 20_000 },
            (err: ServiceError | null, reply?: Buffer) => {
              if (err) fail(tally, `grpc ${err.code} ${err.details}`);
              else if (reply?.toString('latin1').includes('hello!')) tally.ok++;
              else fail(tally, 'grpc: wrong reply');
              resolve();
            },
          );
        });
      }
    } finally {
      client.close();
    }
  });
}

/** REST GET /v1/hello in a loop on each of `n` keep-alive connections until `stop`. */
function restLoad(port: number, n: number, tally: Tally, stop: () => boolean): Promise<void>[] {
  return Array.from({ length: n }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (!stop()) {
        await new Promise<void>((resolve) => {
          const req = http.get({ host: '127.0.0.1', port, path: '/v1/hello', agent }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => {
              if (res.statusCode === 200 && body.includes('hello!')) tally.ok++;
              else fail(tally, `rest status ${res.statusCode}`);
              resolve();
            });
            res.on('error', (e: NodeJS.ErrnoException) => {
              fail(tally, `rest ${e.code ?? e.message}`);
              resolve();
            });
          });
          req.on('error', (e: NodeJS.ErrnoException) => {
            fail(tally, `rest ${e.code ?? e.message}`);
            resolve();
          });
        });
      }
    } finally {
      agent.destroy();
    }
  });
}

describe.skipIf(process.env['SVC_SKIP_HAPROXY'] === '1')(
  'rolling update behind an L4 balancer (HAProxy)',
  () => {
    it('replaces three replicas one at a time under gRPC and REST load: zero failed calls', {
      timeout: 600_000,
    }, async () => {
      const haproxy = haproxyPath();
      const rounds = Number(process.env['ROLLING_ROUNDS'] ?? 1);
      const slots: Slot[] = [];
      // Three replicas, and one slot more for each replacement (ports are fixed in the balancer:
      // picked by freePort, below the ephemeral range, where no other test's port-0 server lands).
      for (let i = 0; i < 3 + 3 * rounds; i++)
        slots.push({ name: `r${i}`, port: await freePort() });
      const dir = mkdtempSync(path.join(tmpdir(), 'rolling-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const cfg = path.join(dir, 'haproxy.cfg');
      // The balancer's own two ports: again on new ones when one was taken before it bound it
      // (haproxy exits saying "Address already in use"). It is up once its stats page lists the
      // slots.
      const { ports } = await startOnFreePorts(
        2,
        ([front, statsPort]) => {
          writeFileSync(
            cfg,
            [
              'global',
              '  maxconn 2000',
              'defaults',
              '  mode tcp',
              '  timeout connect 1s',
              '  timeout client 60s',
              '  timeout server 60s',
              '  retries 3',
              '  option redispatch',
              'frontend stats',
              `  bind 127.0.0.1:${statsPort}`,
              '  mode http',
              '  stats enable',
              '  stats uri /stats',
              'frontend demo',
              `  bind 127.0.0.1:${front}`,
              '  default_backend demo',
              'backend demo',
              '  balance roundrobin',
              '  option httpchk GET /readyz',
              '  http-check expect status 200',
              ...slots.map(
                (s) => `  server ${s.name} 127.0.0.1:${s.port} check inter 200ms fall 1 rise 1`,
              ),
              '',
            ].join('\n'),
          );
          const lb = Child.start(haproxy, ['-f', cfg, '-db'], { env: plainEnv() });
          cleanups.push(() => lb.kill());
          return lb;
        },
        {
          what: 'haproxy to serve its stats page',
          ready: async (_lb, [, statsPort]) =>
            (await serverStates(statsPort!).catch(() => new Map())).has('r0'),
        },
      );
      const [front, statsPort] = ports as [number, number];

      const live = new Map<string, Child>();
      for (const slot of slots.slice(0, 3)) live.set(slot.name, startReplica(slot));
      const upAre = async (want: readonly string[]): Promise<boolean> => {
        const states = await serverStates(statsPort);
        return want.every((n) => states.get(n) === 'UP');
      };
      // Each replica's wait ends at once, with its output, if it exits first (a slot's port taken
      // before it bound it shows as a PortTakenError).
      await Promise.all(
        slots
          .slice(0, 3)
          .map((s) =>
            live.get(s.name)!.until(`${s.name} UP in the balancer`, () => upAre([s.name]), 60_000),
          ),
      );
      await waitFor(
        'the spare slots DOWN in the balancer',
        async () => {
          const states = await serverStates(statsPort);
          return slots.slice(3).every((s) => states.get(s.name)?.startsWith('DOWN'));
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );

      const grpc: Tally = { ok: 0, failed: new Map() };
      const rest: Tally = { ok: 0, failed: new Map() };
      let stopped = false;
      const stop = () => stopped;
      const loops = [...grpcLoad(front, 4, grpc, stop), ...restLoad(front, 4, rest, stop)];
      cleanups.push(async () => {
        stopped = true;
        await Promise.all(loops);
      });
      await waitFor('the load to get going', () => grpc.ok >= 100 && rest.ok >= 100, {
        timeoutMs: 30_000,
      });

      const exits: Array<number | null> = [];
      let next = 3;
      for (let round = 0; round < rounds; round++) {
        for (const old of [...live.keys()]) {
          const slot = slots[next++]!;
          live.set(slot.name, startReplica(slot));
          await live
            .get(slot.name)!
            .until(`${slot.name} UP in the balancer`, () => upAre([slot.name]), 60_000);
          const child = live.get(old)!;
          live.delete(old);
          const okBefore = grpc.ok + rest.ok;
          child.process.kill('SIGTERM');
          exits.push(await child.waitForExit(60_000));
          // Calls went on while it drained.
          expect(grpc.ok + rest.ok).toBeGreaterThan(okBefore);
        }
      }
      const before = { grpc: grpc.ok, rest: rest.ok };
      await waitFor(
        'calls to go on through the new replicas',
        () => grpc.ok > before.grpc + 50 && rest.ok > before.rest + 50,
        {
          timeoutMs: 30_000,
        },
      );
      stopped = true;
      await Promise.all(loops);
      const report = {
        rounds,
        grpc: { ok: grpc.ok, failed: Object.fromEntries(grpc.failed) },
        rest: { ok: rest.ok, failed: Object.fromEntries(rest.failed) },
        exits,
      };
      console.log(`rolling update: ${JSON.stringify(report)}`);
      expect(exits).toEqual(Array(3 * rounds).fill(0));
      expect(report.grpc.failed).toEqual({});
      expect(report.rest.failed).toEqual({});
    });
  },
);
