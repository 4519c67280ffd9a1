import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kvEntry } from './index.js';
import { redisCli, startCluster, type RedisClusterProcesses } from '@svcboot/testkit';
import { bootWithLogs } from './test-support/index.js';

let cluster: RedisClusterProcesses;
beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
}, 90_000);
afterAll(async () => {
  await cluster?.stop();
});

async function nodeId(port: number): Promise<string> {
  return redisCli(port, ['cluster', 'myid']);
}

describe('cluster (three masters started by the harness)', () => {
  it('connects, logs the cluster client type, and reads and writes keys on every master', async () => {
    const logged = await bootWithLogs({
      kvstore: [{ name: 'cluster', addrs: [...cluster.addrs] }],
    });
    try {
      const { app } = logged;
      await app.bootstrap();
      const entry = kvEntry(app, 'cluster');
      expect(entry.mode).toBe('cluster');
      const client = entry.cluster();
      const prefix = `svcboot-kv-test:${randomUUID()}:`;
      const keys = Array.from({ length: 60 }, (_, i) => `${prefix}${i}`);
      for (const k of keys) await client.set(k, `v-${k}`);
      for (const k of keys) expect(await client.get(k)).toBe(`v-${k}`);
      // The keys really are spread over the three masters.
      const perNode = await Promise.all(
        cluster.nodes.map(async (n) => Number(await redisCli(n.port, ['dbsize']))),
      );
      expect(perNode.filter((n) => n > 0)).toHaveLength(3);
      expect(perNode.reduce((a, b) => a + b, 0)).toBe(keys.length);
      await app.shutdown();
      expect(client.status).toBe('end');
      const ping = (await logged.appLog()).split('\n').find((l) => l.includes('Ping redis at'));
      expect(JSON.parse(ping!)).toMatchObject({
        msg: `Ping redis at [${cluster.addrs.join(', ')}] success`,
        clientType: 'cluster',
      });
    } finally {
      await logged.cleanup();
    }
  });

  it('follows a MOVED redirect after a slot changes owner', async () => {
    const logged = await bootWithLogs({
      kvstore: [{ name: 'cluster', addrs: [...cluster.addrs] }],
    });
    try {
      const { app } = logged;
      await app.bootstrap();
      const client = kvEntry(app, 'cluster').cluster();
      const key = `svcboot-kv-test:${randomUUID()}:moved`;
      const slot = Number(await redisCli(cluster.nodes[0]!.port, ['cluster', 'keyslot', key]));
      const ownerAddr = client.slots[slot]![0]!;
      const owner = cluster.nodes.find((n) => n.addr === ownerAddr)!;
      const target = cluster.nodes.find((n) => n !== owner)!;
      const [ownerId, targetId] = [await nodeId(owner.port), await nodeId(target.port)];

      // Move the (empty) slot to another master behind the client's back.
      await redisCli(target.port, ['cluster', 'setslot', String(slot), 'importing', ownerId]);
      await redisCli(owner.port, ['cluster', 'setslot', String(slot), 'migrating', targetId]);
      for (const n of [
        target,
        owner,
        ...cluster.nodes.filter((x) => x !== owner && x !== target),
      ]) {
        await redisCli(n.port, ['cluster', 'setslot', String(slot), 'node', targetId]);
      }
      expect(client.slots[slot]![0]).toBe(owner.addr); // the client's map is stale: the write gets MOVED

      await client.set(key, 'moved-value');
      expect(await redisCli(target.port, ['get', key])).toBe('moved-value');
      expect(await client.get(key)).toBe('moved-value');
      expect(client.slots[slot]![0]).toBe(target.addr);
      await client.del(key);
    } finally {
      await logged.cleanup();
    }
  });

  it('fails bootstrap within dialTimeoutMs when no cluster node answers', async () => {
    const addrs = ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3'];
    const logged = await bootWithLogs({
      kvstore: [{ name: 'nocluster', addrs, dialTimeoutMs: 1000, pass: 'Cl-Secret-901' }],
    });
    try {
      const err = await logged.app.bootstrap().catch((e: unknown) => e);
      const message = (err as Error).message;
      expect(message).toContain(
        `kvstore[nocluster]: cannot reach redis (cluster) at [${addrs.join(', ')}]`,
      );
      expect(message).not.toContain('Cl-Secret-901');
    } finally {
      await logged.cleanup();
    }
  });
});
