// First: grpc-js must load with GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true to ask the test's DNS server.
import './test-support/alternative-resolver.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  loadPackageDefinition,
  Server,
  ServerCredentials,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import '@svcboot/entry-grpc';
import '@svcboot/entry-httpclient';
import '@svcboot/middleware-trace';
import { grpcClient } from '@svcboot/entry-grpcclient';
import { DnsServer } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDir } from './services.js';

/*
 * The wiring `svc deploy` committed for the front (deploy/k8s/front.yaml: SVC_SET with
 * grpcclient.users.target=dns:///users-headless.demo-chain.svc.cluster.local:8102 and round_robin)
 * against three users replicas, with testkit's DNS server standing in for cluster DNS: the
 * headless Service's name answers with every replica's address, as kube-dns does. round_robin
 * spreads the calls over the three; without it (grpcclient's default, pick_first) every call goes
 * to one: the imbalance a ClusterIP Service shows for gRPC.
 */

const HEADLESS = 'users-headless.demo-chain.svc.cluster.local';

/** The SVC_SET of the committed front Deployment (its one `- name: SVC_SET` and `value:`). */
function committedSvcSet(): string {
  const text = readFileSync(path.join(appDir, 'deploy/k8s/front.yaml'), 'utf8');
  return /- name: SVC_SET\n\s+value: (\S+)\n/.exec(text)?.[1] ?? '';
}

const definition = loadSync(path.join(appDir, 'api/chain/v1/chain.proto'), {
  includeDirs: [path.join(appDir, 'api')],
  defaults: true,
});
const usersService = definition['chain.v1.Users'] as ServiceDefinition;
type UsersClient = Client & {
  GetUser(req: { id: string }, cb: (err: ServiceError | null, u: { name: string }) => void): void;
};
const Users = (
  loadPackageDefinition(definition) as unknown as {
    chain: { v1: { Users: new (...args: ConstructorParameters<typeof Client>) => UsersClient } };
  }
).chain.v1.Users;

/** A users replica on host:port that answers with its own name. */
async function replica(
  name: string,
  host: string,
  port: number,
): Promise<{ server: Server; port: number }> {
  const server = new Server();
  server.addService(usersService, {
    GetUser: (_call: unknown, done: (err: null, u: { id: string; name: string }) => void) =>
      done(null, { id: '1', name }),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, port: bound };
}

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

let dns: DnsServer;
let port: number;
beforeAll(async () => {
  dns = await DnsServer.start();
  cleanup.push(() => dns.close());
  // Three pods of users: the same port on three loopback addresses.
  const a = await replica('a', '127.0.0.1', 0);
  port = a.port;
  cleanup.push(() => a.server.forceShutdown());
  for (const [name, host] of [
    ['b', '127.0.0.2'],
    ['c', '127.0.0.3'],
  ] as const) {
    const r = await replica(name, host, port);
    cleanup.push(() => r.server.forceShutdown());
  }
  dns.set(HEADLESS, ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
});

/**
 * The front (front.yaml, its gRPC port any free one) booted with `svcSet`; which replicas answer
 * its grpcclient[users]: calls until `enough` says so, each replica's count.
 */
async function answers(
  svcSet: string,
  enough: (seen: Map<string, number>) => boolean,
): Promise<Map<string, number>> {
  const app: App = await boot({
    configFile: path.join(appDir, 'front.yaml'),
    cwd: appDir,
    argv: [],
    env: { SVC_SET: svcSet, PORT: '0' },
  });
  cleanup.push(() => app.shutdown('test'));
  await app.bootstrap();
  const users = grpcClient(app, 'users').plain(Users);
  const seen = new Map<string, number>();
  // round_robin connects to each address as it is resolved; calls go to those ready so far.
  const deadline = Date.now() + 20_000;
  while (!enough(seen) && Date.now() < deadline) {
    const name = await new Promise<string>((resolve, reject) =>
      users.GetUser({ id: '1' }, (err, u) => (err ? reject(err) : resolve(u.name))),
    );
    seen.set(name, (seen.get(name) ?? 0) + 1);
  }
  return seen;
}

describe("the committed wiring of front → users, against three replicas behind the headless Service's name", () => {
  // The cluster's DNS is the test's: dns:///name → dns://127.0.0.1:<port>/name; the port, the replicas'.
  // Only front's grpcclient[users] is booted here: the other assignments are left out.
  const local = (set: string) =>
    set
      .split(',')
      .filter((a) => a.startsWith('grpcclient.users.'))
      .join(',')
      .replace(`dns:///${HEADLESS}:8102`, `dns://127.0.0.1:${dns.port}/${HEADLESS}:${port}`);

  it('is a dns:/// target on the headless name with round_robin', () => {
    expect(committedSvcSet().split(',')).toEqual(
      expect.arrayContaining([
        `grpcclient.users.target=dns:///${HEADLESS}:8102`,
        'grpcclient.users.loadBalancing=round_robin',
      ]),
    );
  });

  it('round_robin: the calls spread over all three replicas', async () => {
    const seen = await answers(local(committedSvcSet()), (m) => m.size === 3);
    expect([...seen.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(dns.queries.get(HEADLESS)).toBeGreaterThanOrEqual(1);
  });

  it('pick_first (without the wiring of the balancing): every call on one replica', async () => {
    const set = local(committedSvcSet()).replace(
      'grpcclient.users.loadBalancing=round_robin',
      'grpcclient.users.loadBalancing=pick_first',
    );
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const seen = await answers(set, (m) => total(m) === 30);
    expect(seen.size).toBe(1);
    expect([...seen.values()]).toEqual([30]);
  });
});
