import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Client,
  credentials,
  loadPackageDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import {
  Child,
  DnsServer,
  freePort,
  plainEnv,
  SOURCE_NODE_ARGS,
  startOnFreePort,
  waitFor,
} from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDir } from './services.js';

/*
 * demo-chain's rolling update as a system, on one machine: what a Deployment of users does to
 * the front's calls while the front is under load, with the wiring `svc deploy` committed.
 *
 * - users runs as three replicas, each a process of its own (`node src/main.ts users`, as in its
 *   pod). Each has a pod address of its own, 127.0.1.<n> on one port shared by all (a TCP
 *   forwarder to the replica's port: the grpc entry listens on every interface, so two replicas
 *   cannot share a port on one machine), as pods do.
 * - testkit's DNS server stands in for cluster DNS: the headless Service's name answers with the
 *   addresses of the replicas that are ready; a replica leaves it when it gets its SIGTERM (the
 *   endpoints controller removes a terminating pod at the moment the kubelet signals it).
 * - front and billing run one replica each. front is booted with the SVC_SET of the committed
 *   deploy/k8s/front.yaml (dns:/// target on the headless name, round_robin, a 1 s
 *   dnsMinIntervalMs), pointed at the test's DNS server and billing's port; its boot.yaml is a
 *   copy in a temporary folder.
 * - The load, on the front: gRPC GetAccount and REST GET /v1/accounts/42 in loops (each call one
 *   GetUser on users and one balance on billing), and WatchUsers server streams in loops (the front
 *   relays users' ListUsers stream message by message: 10 users, 20 ms apart).
 * - The roll, as maxSurge 1 / maxUnavailable 0 does it: a new replica in DNS (it is ready), then
 *   an old one out of DNS and signalled at the same moment; the next step once 10 more calls
 *   ended. The new replicas were started ahead (a roll's pace is then the drain's, as on a
 *   cluster whose pods start in a second or two, not a process's start on this crowded machine).
 *   While the first old replica drains, the front's boot.yaml changes (its logger's level) and
 *   the front gets SIGHUP: a reload in flight.
 *
 * With SIGTERM (the drain: readiness off for app.drainDelayMs, GOAWAY, calls and streams in flight
 * complete) no unary call fails, and every stream ends with OK after all its users. The control
 * then rolls the replicas the first roll left with SIGKILL: a replica killed with streams open
 * cuts them (a stream that has relayed a message cannot be retried), so the same check must fail.
 *
 * One system serves both rolls (nine users replicas: three, and three for each roll): starting
 * the processes (tsx compiles the sources) is most of the time. Run: SVC_E2E=1 npx vitest run
 * src/rolling-update.e2e.test.ts (the front, a child, gets GRPC_NODE_USE_ALTERNATIVE_RESOLVER).
 */

const HEADLESS = 'users-headless.demo-chain.svc.cluster.local';
const STREAM_USERS = 10;
/**
 * Each server entry's load shedding off: the machine that runs the test is shared, and at its
 * busiest the entries shed calls on a busy event loop (RESOURCE_EXHAUSTED), whatever the roll
 * does; shedding has tests of its own (entry-core's overload/).
 */
const NO_SHEDDING = (entry: string, kind = 'grpc'): string =>
  `${kind}.${entry}.loadShedding.enabled=false`;
/** How long a process may take to start and answer ready on a crowded machine. */
const START_MS = 90_000;

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The SVC_SET of the committed front Deployment (its one `- name: SVC_SET` and `value:`). */
function committedSvcSet(): string {
  const text = readFileSync(path.join(appDir, 'deploy/k8s/front.yaml'), 'utf8');
  const set = /- name: SVC_SET\n\s+value: (\S+)\n/.exec(text)?.[1];
  if (!set) throw new Error('deploy/k8s/front.yaml has no SVC_SET: run `npx svc deploy` here');
  return set;
}

const definition = loadSync(path.join(appDir, 'api/chain/v1/chain.proto'), {
  includeDirs: [path.join(appDir, 'api')],
  longs: Number,
  defaults: true,
});
interface User {
  id: string;
  name: string;
}
type FrontClient = Client & {
  GetAccount(
    req: { id: string },
    options: { deadline: number },
    cb: (err: ServiceError | null, account: { name: string; balanceCents: number }) => void,
  ): void;
  WatchUsers(
    req: { count: number; intervalMs: number },
    options: { deadline: number },
  ): NodeJS.EventEmitter & { cancel(): void };
};
const Front = (
  loadPackageDefinition(definition) as unknown as {
    chain: { v1: { Front: new (...args: ConstructorParameters<typeof Client>) => FrontClient } };
  }
).chain.v1.Front;

/** GET on 127.0.0.1:port: the status, 0 when the connection failed. */
function getStatus(port: number, urlPath: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

/**
 * A pod's address: `host:port` forwarded to a replica's port on 127.0.0.1, byte for byte, each
 * side's end or reset passed to the other. Closed when the replica is gone (as the pod's IP
 * leaves the network): new connections are then refused.
 */
class PodAddress {
  private readonly sockets = new Set<net.Socket>();
  /** Connections accepted so far. */
  connections = 0;
  private constructor(
    private readonly server: net.Server,
    readonly host: string,
  ) {}

  static listen(host: string, port: number, target: number): Promise<PodAddress> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      const pod = new PodAddress(server, host);
      server.on('connection', (down) => {
        pod.connections++;
        const up = net.connect(target, '127.0.0.1');
        for (const [a, b] of [
          [down, up],
          [up, down],
        ] as const) {
          pod.sockets.add(a);
          a.pipe(b);
          a.on('error', () => b.destroy());
          a.on('close', () => {
            pod.sockets.delete(a);
            b.destroy();
          });
        }
      });
      server.once('error', reject);
      server.listen(port, host, () => resolve(pod));
    });
  }

  close(): void {
    this.server.close();
    for (const s of this.sockets) s.destroy();
  }
}

interface Replica {
  child: Child;
  pod: PodAddress;
}

interface Tally {
  ok: number;
  failed: Map<string, number>;
}
const newTally = (): Tally => ({ ok: 0, failed: new Map() });
/** Calls (or streams) that ended, either way. */
const ended = (t: Tally): number => t.ok + [...t.failed.values()].reduce((a, b) => a + b, 0);
const fail = (t: Tally, why: string): void => {
  t.failed.set(why, (t.failed.get(why) ?? 0) + 1);
};

/** GetAccount over gRPC in a loop on each of `n` channels until `stop`. */
function grpcLoad(port: number, n: number, tally: Tally, stop: () => boolean): Promise<void>[] {
  return Array.from({ length: n }, async () => {
    const client = new Front(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    try {
      while (!stop()) {
        await new Promise<void>((resolve) =>
          client.GetAccount({ id: '42' }, { deadline: Date.now() + 20_000 }, (err, account) => {
            if (err) fail(tally, `grpc ${status[err.code]} ${err.details}`);
            else if (account.name === 'user 42' && account.balanceCents === 4200) tally.ok++;
            else fail(tally, 'grpc: wrong answer');
            resolve();
          }),
        );
      }
    } finally {
      client.close();
    }
  });
}

/** GET /v1/accounts/42 (the gateway) in a loop on each of `n` keep-alive connections. */
function restLoad(port: number, n: number, tally: Tally, stop: () => boolean): Promise<void>[] {
  return Array.from({ length: n }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (!stop()) {
        await new Promise<void>((resolve) => {
          const req = http.get(
            { host: '127.0.0.1', port, path: '/v1/accounts/42', agent },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (body += c));
              res.on('end', () => {
                if (res.statusCode === 200 && body.includes('"user 42"')) tally.ok++;
                else fail(tally, `rest ${res.statusCode} ${body.slice(0, 120)}`);
                resolve();
              });
              res.on('error', (e: NodeJS.ErrnoException) => {
                fail(tally, `rest ${e.code ?? e.message}`);
                resolve();
              });
            },
          );
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

/**
 * WatchUsers in a loop on each of `n` channels: a stream counts as ok when it ends OK after all
 * STREAM_USERS users in order; otherwise its status and how many users it had relayed.
 */
function streamLoad(port: number, n: number, tally: Tally, stop: () => boolean): Promise<void>[] {
  return Array.from({ length: n }, async () => {
    const client = new Front(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    try {
      while (!stop()) {
        await new Promise<void>((resolve) => {
          const stream = client.WatchUsers(
            { count: STREAM_USERS, intervalMs: 20 },
            { deadline: Date.now() + 20_000 },
          );
          const ids: string[] = [];
          stream.on('data', (u: User) => ids.push(u.id));
          stream.on('error', (err: ServiceError) => {
            fail(
              tally,
              `stream ${status[err.code]} ${err.details} after ${ids.length > 0 ? 'some' : 'no'} users`,
            );
            resolve();
          });
          stream.on('status', (s: { code: number }) => {
            if (s.code !== status.OK) return;
            const want = Array.from({ length: STREAM_USERS }, (_, i) => String(i));
            if (ids.join() === want.join()) tally.ok++;
            else fail(tally, `stream OK with ${ids.length} users`);
            resolve();
          });
        });
      }
    } finally {
      client.close();
    }
  });
}

interface Report {
  signal: NodeJS.Signals;
  grpc: { ok: number; failed: Record<string, number> };
  rest: { ok: number; failed: Record<string, number> };
  streams: { ok: number; failed: Record<string, number> };
  /** Each old replica's exit: its code, or the signal that ended it. */
  exits: Array<number | string>;
  reload: boolean;
  /** Connections each pod address accepted (the front's channel connects to every address it resolved). */
  connections: Record<string, number>;
  /** How long the system took to start (shared by both rolls); the roll and the calls after it. */
  ms: { start: number; roll: number };
}

/** What the drain promises: no unary call failed, every stream completed. */
const nothingLost = (r: Report): boolean =>
  Object.keys(r.grpc.failed).length === 0 &&
  Object.keys(r.rest.failed).length === 0 &&
  Object.keys(r.streams.failed).length === 0;

/** demo-chain on this machine: users' pods and DNS, billing, the front. */
interface System {
  front: Child;
  port: number;
  /** The front's boot.yaml (a copy: the rolls change it and reload the front). */
  frontYaml: string;
  /** users' replicas: three serving, then three for each roll, started ahead. */
  users: Replica[];
  /** Puts the replicas in DNS (the headless name's answer): those ready, in the Service. */
  publish(ready: readonly Replica[]): void;
  /** How long starting it all took. */
  startMs: number;
}

/**
 * Starts the system: billing, nine users replicas (three serving and three for each of the two
 * rolls, started ahead so that a roll's pace is the drain's, not a process's start on this
 * machine; a pod is in DNS only from its turn on), the front with the committed wiring.
 */
async function startSystem(): Promise<System> {
  const began = Date.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'chain-roll-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dns = await DnsServer.start();
  cleanups.push(() => dns.close());

  // users: pods at 127.0.1.<n>:podPort, each forwarding to its replica's own port.
  const podPort = await freePort();
  let pods = 0;
  const startUsers = async (): Promise<Replica> => {
    const { child, port } = await startOnFreePort(
      (p) => {
        const c = Child.start(process.execPath, [...SOURCE_NODE_ARGS, 'src/main.ts', 'users'], {
          cwd: appDir,
          env: plainEnv({
            USERS_PORT: String(p),
            SPANS_FILE: '/dev/null',
            SVC_SET: NO_SHEDDING('users'),
          }),
        });
        cleanups.push(() => c.kill());
        return c;
      },
      {
        what: 'users to be ready',
        ready: async (_c, p) => (await getStatus(p, '/readyz')) === 200,
        timeoutMs: START_MS,
      },
    );
    const pod = await PodAddress.listen(`127.0.1.${++pods}`, podPort, port);
    cleanups.push(() => pod.close());
    void child.exited.then(() => pod.close());
    return { child, pod };
  };
  const billingStarted = startOnFreePort(
    (p) => {
      const c = Child.start(process.execPath, [...SOURCE_NODE_ARGS, 'src/main.ts', 'billing'], {
        cwd: appDir,
        env: plainEnv({
          BILLING_PORT: String(p),
          SPANS_FILE: '/dev/null',
          SVC_SET: NO_SHEDDING('billing', 'httpserver'),
        }),
      });
      cleanups.push(() => c.kill());
      return c;
    },
    {
      what: 'billing to be ready',
      ready: async (_c, p) => (await getStatus(p, '/readyz')) === 200,
      timeoutMs: START_MS,
    },
  );
  const usersStarted = Array.from({ length: 9 }, () => startUsers());
  const [billing, ...users] = await Promise.all([billingStarted, ...usersStarted]);
  const publish = (ready: readonly Replica[]) =>
    dns.set(
      HEADLESS,
      ready.map((r) => r.pod.host),
    );
  publish(users.slice(0, 3));

  // front, with the committed wiring pointed at this machine.
  const frontYaml = path.join(dir, 'front.yaml');
  copyFileSync(path.join(appDir, 'front.yaml'), frontYaml);
  const svcSet = committedSvcSet()
    .replace(`dns:///${HEADLESS}:8102`, `dns://127.0.0.1:${dns.port}/${HEADLESS}:${podPort}`)
    .replace(/http:\/\/billing\.[a-z.-]+:8103/, `http://127.0.0.1:${billing.port}`);
  expect(svcSet).toContain(`dns://127.0.0.1:${dns.port}/`);
  expect(svcSet).toContain(`http://127.0.0.1:${billing.port}`);
  const { child: front, port } = await startOnFreePort(
    (p) => {
      const c = Child.start(process.execPath, [...SOURCE_NODE_ARGS, 'src/main.ts', 'front'], {
        cwd: appDir,
        env: plainEnv({
          PORT: String(p),
          SVC_BOOT_CONFIG: frontYaml,
          SVC_SET: `${svcSet},${NO_SHEDDING('front')}`,
          SPANS_FILE: '/dev/null',
          GRPC_NODE_USE_ALTERNATIVE_RESOLVER: 'true',
        }),
      });
      cleanups.push(() => c.kill());
      return c;
    },
    {
      what: 'front to be ready',
      ready: async (_c, p) => (await getStatus(p, '/readyz')) === 200,
      timeoutMs: START_MS,
    },
  );
  return { front, port, frontYaml, users, publish, startMs: Date.now() - began };
}

const RELOADED = /Reload of .* applied: logger\[quiet\]\.level/g;

/**
 * The load on the front, and `old` replaced by `fresh` one at a time with `signal`; while the
 * first old one drains, the front's logger level goes from `level[0]` to `level[1]` with a reload.
 */
async function roll(
  sys: System,
  signal: 'SIGTERM' | 'SIGKILL',
  old: readonly Replica[],
  fresh: readonly Replica[],
  level: readonly [string, string],
): Promise<Report> {
  const { front, port } = sys;
  const grpc = newTally();
  const rest = newTally();
  const streams = newTally();
  let stopped = false;
  const stop = () => stopped;
  const loops = [
    ...grpcLoad(port, 2, grpc, stop),
    ...restLoad(port, 1, rest, stop),
    ...streamLoad(port, 6, streams, stop),
  ];
  cleanups.push(async () => {
    stopped = true;
    await Promise.all(loops);
  });
  await waitFor('the load to get going', () => grpc.ok >= 30 && rest.ok >= 15 && streams.ok >= 12, {
    timeoutMs: 60_000,
  });

  const rollBegan = Date.now();
  // The roll: a new replica ready and in DNS, then an old one out of DNS and signalled; the next
  // step once calls went on (as a Deployment's next step waits for the new pod to be ready).
  const ready = [...old];
  const exits: Array<Promise<number | string>> = [];
  let reloaded: Promise<boolean> = Promise.resolve(false);
  for (const [i, gone] of old.entries()) {
    ready.push(fresh[i]!);
    sys.publish(ready);
    ready.splice(ready.indexOf(gone), 1);
    sys.publish(ready);
    gone.child.process.kill(signal);
    exits.push(
      gone.child
        .waitForExit(30_000)
        .then(() => gone.child.process.signalCode ?? gone.child.process.exitCode ?? -1),
    );
    if (i === 0) {
      // A reload of the front while the first old replica drains and the calls go on.
      const reloads = () => (front.stdout + front.stderr).match(RELOADED)?.length ?? 0;
      const before = reloads();
      const text = readFileSync(sys.frontYaml, 'utf8');
      expect(text).toContain(`level: ${level[0]}`);
      writeFileSync(sys.frontYaml, text.replace(`level: ${level[0]}`, `level: ${level[1]}`));
      front.process.kill('SIGHUP');
      reloaded = front
        .until('the front to reload', () => reloads() > before, 60_000)
        .then(() => true);
    }
    const at = ended(grpc) + ended(rest);
    await waitFor('calls to go on', () => ended(grpc) + ended(rest) >= at + 10, {
      timeoutMs: 60_000,
    });
  }
  const exitCodes = await Promise.all(exits);
  const reload = await reloaded;
  // Calls go on through the new replicas alone.
  const before = { grpc: grpc.ok, rest: rest.ok, streams: streams.ok };
  await waitFor(
    'calls to go on through the new replicas',
    () =>
      grpc.ok > before.grpc + 30 && rest.ok > before.rest + 15 && streams.ok > before.streams + 6,
    { timeoutMs: 60_000 },
  );
  stopped = true;
  await Promise.all(loops);
  const report: Report = {
    signal,
    grpc: { ok: grpc.ok, failed: Object.fromEntries(grpc.failed) },
    rest: { ok: rest.ok, failed: Object.fromEntries(rest.failed) },
    streams: { ok: streams.ok, failed: Object.fromEntries(streams.failed) },
    exits: exitCodes,
    reload,
    ms: { start: sys.startMs, roll: Date.now() - rollBegan },
    connections: Object.fromEntries([...old, ...fresh].map((r) => [r.pod.host, r.pod.connections])),
  };
  console.log(`demo-chain rolling update: ${JSON.stringify(report)}`);
  return report;
}

// An end-to-end test: run with SVC_E2E=1 (the root vitest config leaves *.e2e.test.ts out of
// `npm test` otherwise; CI runs them once in a step of their own).
describe.skipIf(process.env['SVC_E2E'] !== '1')(
  'demo-chain: users rolled under load on the front, streams and a reload in flight',
  () => {
    let sys: System;
    beforeAll(async () => {
      sys = await startSystem();
    }, 300_000);

    it('SIGTERM (the drain): every old replica exits 0, no unary call fails, every stream completes', {
      timeout: 300_000,
    }, async () => {
      const fresh = sys.users.slice(3, 6);
      const report = await roll(sys, 'SIGTERM', sys.users.slice(0, 3), fresh, ['warn', 'error']);
      expect(report.exits).toEqual([0, 0, 0]);
      expect(report.reload).toBe(true);
      // The front found every new replica through DNS.
      for (const r of fresh) expect(report.connections[r.pod.host]).toBeGreaterThan(0);
      expect(report.grpc.failed).toEqual({});
      expect(report.rest.failed).toEqual({});
      expect(report.streams.failed).toEqual({});
      expect(nothingLost(report)).toBe(true);
    });

    it('control, SIGKILL (no drain): the same check fails', { timeout: 300_000 }, async () => {
      // The replicas the first roll left serving, replaced in turn.
      const report = await roll(sys, 'SIGKILL', sys.users.slice(3, 6), sys.users.slice(6, 9), [
        'error',
        'warn',
      ]);
      expect(report.exits).toEqual(['SIGKILL', 'SIGKILL', 'SIGKILL']);
      expect(report.reload).toBe(true);
      expect(nothingLost(report)).toBe(false);
    });
  },
);
