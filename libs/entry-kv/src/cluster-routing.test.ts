import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import { waitFor } from '@svcboot/testkit';
import { kvEntry } from './index.js';
import { redisCli, startCluster, type RedisClusterProcesses } from '@svcboot/testkit';
import { bootWithLogs } from './test-support/index.js';

// Three masters with one replica each: where read-only commands go.
let cluster: RedisClusterProcesses;
const keys = Array.from({ length: 60 }, (_, i) => `svcboot-kv-test:${randomUUID()}:${i}`);
let masters: Set<string>;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicasPerMaster: 1 });
  const nodes = await redisCli(cluster.nodes[0]!.port, ['cluster', 'nodes']);
  masters = new Set(
    nodes
      .split('\n')
      .filter((l) => l.includes('master'))
      .map((l) => l.split(' ')[1]!.split('@')[0]!),
  );
  expect(masters.size).toBe(3);
  // Seed through one master with redirects followed (-c), then let the replicas catch up.
  for (const k of keys) await redisCli(cluster.nodes[0]!.port, ['-c', 'set', k, 'v']);
  await waitFor('the replicas to have every key', async () => {
    const sizes = await Promise.all(
      cluster.nodes
        .filter((n) => !masters.has(n.addr))
        .map(async (n) => Number(await redisCli(n.port, ['dbsize']))),
    );
    return sizes.reduce((a, b) => a + b, 0) === keys.length;
  });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** GET calls each node served since its stats were reset, by address. */
async function getsPerNode(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const n of cluster.nodes) {
    const stats = await redisCli(n.port, ['info', 'commandstats']);
    out.set(n.addr, Number(/cmdstat_get:calls=(\d+)/.exec(stats)?.[1] ?? 0));
  }
  return out;
}

async function readAll(
  options: Record<string, unknown>,
): Promise<{ gets: Map<string, number>; client: Cluster; expected?: Map<string, number> }> {
  const logged = await bootWithLogs({
    kvstore: [{ name: 'c', addrs: [...cluster.addrs], ...options }],
  });
  try {
    await logged.app.bootstrap();
    const entry = kvEntry(logged.app, 'c');
    const client = entry.cluster();
    await Promise.all(cluster.nodes.map((n) => redisCli(n.port, ['config', 'resetstat'])));
    for (const k of keys) expect(await client.get(k)).toBe('v');
    const gets = await getsPerNode();
    const router = entry.connection.latencyRouter;
    let expected: Map<string, number> | undefined;
    if (router) {
      const byAddr = new Map<string, Redis>(
        client.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]),
      );
      expected = new Map();
      for (const k of keys) {
        const slot = Number(await client.cluster('KEYSLOT', k));
        const candidates = client.slots[slot]!.map((addr: string) => byAddr.get(addr)!);
        const chosen = router.pick(candidates)!;
        const addr = `${chosen.options.host}:${chosen.options.port}`;
        expected.set(addr, (expected.get(addr) ?? 0) + 1);
      }
      for (const n of client.nodes('all'))
        expect(router.latencyOf(n)).toBeLessThan(Number.POSITIVE_INFINITY);
    }
    return { gets, client, expected };
  } finally {
    await logged.cleanup();
  }
}

const sum = (gets: Map<string, number>, pick: (addr: string) => boolean): number =>
  [...gets].filter(([addr]) => pick(addr)).reduce((a, [, n]) => a + n, 0);

describe('cluster read routing (three masters, one replica each)', () => {
  it('by default reads go to the masters', async () => {
    const { gets } = await readAll({});
    expect(sum(gets, (a) => masters.has(a))).toBe(keys.length);
  });

  it('readOnly: reads go to the replicas', async () => {
    const { gets } = await readAll({ readOnly: true });
    expect(sum(gets, (a) => !masters.has(a))).toBe(keys.length);
  });

  it('routeRandomly: reads are spread over masters and replicas', async () => {
    const { gets } = await readAll({ routeRandomly: true });
    expect(sum(gets, (a) => masters.has(a))).toBeGreaterThan(0);
    expect(sum(gets, (a) => !masters.has(a))).toBeGreaterThan(0);
    expect(sum(gets, () => true)).toBe(keys.length);
  });

  it('routeByLatency: every node is measured and each read goes to the fastest node of its slot', async () => {
    const { gets, expected } = await readAll({ routeByLatency: true, routeRandomly: true });
    expect(expected).toBeDefined();
    for (const [addr, n] of gets) expect(n, addr).toBe(expected!.get(addr) ?? 0);
  });
});
