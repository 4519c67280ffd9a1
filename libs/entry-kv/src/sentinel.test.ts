import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitFor } from '@svcboot/testkit';
import { kvEntry } from './index.js';
import { redisCli, startSentinelGroup, type SentinelGroupProcesses } from '@svcboot/testkit';
import { bootWithLogs } from './test-support/index.js';

const password = 'Sentinel-Data-Pw-4410';
const sentinelPassword = 'Sentinel-Own-Pw-7781';
let group: SentinelGroupProcesses;
beforeAll(async () => {
  group = await startSentinelGroup({ masterName: 'svcmaster', password, sentinelPassword });
}, 90_000);
afterAll(async () => {
  await group?.stop();
});

function portOf(addr: string): number {
  return Number(addr.slice(addr.lastIndexOf(':') + 1));
}

describe('sentinel (master + replica + three sentinels started by the harness)', () => {
  it('connects through the sentinels (mansterName alias), logs the sentinel client type, hides both passwords', async () => {
    const logged = await bootWithLogs({
      kvstore: [
        {
          name: 'ha',
          addrs: [...group.addrs],
          mansterName: 'svcmaster',
          pass: password,
          sentinelPass: sentinelPassword,
        },
      ],
    });
    try {
      await logged.app.bootstrap();
      const entry = kvEntry(logged.app, 'ha');
      expect(entry.mode).toBe('sentinel');
      const key = `svcboot-kv-test:${randomUUID()}`;
      await entry.redis().set(key, 'on-master', 'EX', 60);
      const master = await group.currentMaster();
      expect(await redisCli(portOf(master), ['get', key], password)).toBe('on-master');
      await logged.app.shutdown();
      const log = await logged.appLog();
      const ping = log.split('\n').find((l) => l.includes('Ping redis at'));
      expect(JSON.parse(ping!)).toMatchObject({
        msg: `Ping redis at [${group.addrs.join(', ')}] success`,
        clientType: 'sentinel',
      });
      const out = log + (await logged.records());
      expect(out).not.toContain(password);
      expect(out).not.toContain(sentinelPassword);
    } finally {
      await logged.cleanup();
    }
  });

  it('readOnly connects to the replica', async () => {
    const logged = await bootWithLogs({
      kvstore: [
        {
          name: 'ro',
          addrs: [...group.addrs],
          masterName: 'svcmaster',
          pass: password,
          sentinelPass: sentinelPassword,
          readOnly: true,
        },
      ],
    });
    try {
      await logged.app.bootstrap();
      const role = await kvEntry(logged.app, 'ro').redis().role();
      expect(role[0]).toBe('slave');
    } finally {
      await logged.cleanup();
    }
  });

  it('a wrong sentinel password fails bootstrap within dialTimeoutMs without showing it', async () => {
    const wrong = 'Wrong-Sentinel-Pw-1';
    const logged = await bootWithLogs({
      kvstore: [
        {
          name: 'ha',
          addrs: [...group.addrs],
          masterName: 'svcmaster',
          pass: password,
          sentinelPass: wrong,
          dialTimeoutMs: 1500,
        },
      ],
    });
    try {
      const err = await logged.app.bootstrap().catch((e: unknown) => e);
      const message = (err as Error).message;
      expect(message).toContain(
        `kvstore[ha]: cannot reach redis (sentinel) at [${group.addrs.join(', ')}]`,
      );
      expect(message).toContain('master "svcmaster"');
      expect(message).not.toContain(wrong);
      expect(message).not.toContain(password);
    } finally {
      await logged.cleanup();
    }
  });

  it('fails bootstrap when no sentinel answers, naming the sentinels and the master', async () => {
    const addrs = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    const logged = await bootWithLogs({
      kvstore: [{ name: 'ha', addrs, masterName: 'svcmaster', dialTimeoutMs: 1000 }],
    });
    try {
      const err = await logged.app.bootstrap().catch((e: unknown) => e);
      const message = (err as Error).message;
      expect(message).toContain(
        `kvstore[ha]: cannot reach redis (sentinel) at [${addrs.join(', ')}]`,
      );
      expect(message).toContain('All sentinels are unreachable');
    } finally {
      await logged.cleanup();
    }
  });

  // Last: it moves the master.
  it('keeps writing through SENTINEL FAILOVER, then writes to the new master', async () => {
    const logged = await bootWithLogs({
      kvstore: [
        {
          name: 'ha',
          addrs: [...group.addrs],
          masterName: 'svcmaster',
          pass: password,
          sentinelPass: sentinelPassword,
        },
      ],
    });
    try {
      await logged.app.bootstrap();
      const client = kvEntry(logged.app, 'ha').redis();
      const prefix = `svcboot-kv-test:${randomUUID()}:`;
      const before = await group.currentMaster();
      let written = 0;
      const failures: string[] = [];
      let stop = false;
      const writer = (async () => {
        while (!stop) {
          try {
            await client.set(`${prefix}${written}`, String(written), 'EX', 120);
            written++;
          } catch (err) {
            failures.push(`${(err as Error).message} [${client.status}]`);
            if (failures.length > 1000) throw new Error(`writes keep failing: ${failures.at(-1)}`);
          }
        }
      })();
      await waitFor('some writes before the failover', () => written >= 20);
      await redisCli(
        group.sentinels[0]!.port,
        ['sentinel', 'failover', 'svcmaster'],
        sentinelPassword,
      );
      const after = await waitFor(
        'sentinel to report a new master',
        async () => {
          const now = await group.currentMaster();
          return now !== before ? now : false;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      // Writes go on: keep going until a good run lands on the new master.
      const mark = written;
      await waitFor(
        'writes on the new master',
        async () => {
          if (written < mark + 50) return false;
          const role = await redisCli(portOf(after), ['role'], password);
          const n = written - 1;
          return (
            role.startsWith('master') &&
            (await redisCli(portOf(after), ['get', `${prefix}${n}`], password)) === String(n)
          );
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      stop = true;
      await writer;
      expect(after).not.toBe(before);
      // Every acknowledged write is on the new master (the old one replicated before promotion).
      const last = written - 1;
      expect(await redisCli(portOf(after), ['get', `${prefix}${last}`], password)).toBe(
        String(last),
      );
      expect(await redisCli(portOf(after), ['get', `${prefix}0`], password)).toBe('0');
      // Replication is asynchronous: writes the old master acknowledged after the promotion, before
      // the client switched on +switch-master, are not on the new master (Redis's own failover window).
      const kept = Number(
        await redisCli(
          portOf(after),
          ['eval', "return #redis.call('keys', ARGV[1])", '0', `${prefix}*`],
          password,
        ),
      );
      console.info(
        `sentinel failover: ${written} acknowledged writes, ${failures.length} failed, ${written - kept} written to the old master during the switch` +
          (failures.length ? ` (${[...new Set(failures)].join(' | ')})` : ''),
      );
    } finally {
      await logged.cleanup();
    }
  });
});
