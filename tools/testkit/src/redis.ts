import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Child, run } from './process.js';
import { waitFor } from './wait.js';

/** One `redis-server` process on 127.0.0.1, in its own temp folder. */
export interface RedisProcess {
  readonly port: number;
  readonly pid: number;
  readonly addr: string;
  readonly dir: string;
  /** Output so far, for failure messages. */
  output(): string;
  /** SIGKILLs the process (if running) and waits for it to exit; the folder stays until `remove`. */
  kill(): Promise<void>;
  /** Kills it and removes its folder. */
  stop(): Promise<void>;
}

/** Runs `redis-cli -p port args…` and returns its trimmed output (throws on a non-zero exit). */
export async function redisCli(
  port: number,
  args: readonly string[],
  password?: string,
): Promise<string> {
  const auth = password ? ['--no-auth-warning', '-a', password] : [];
  const { stdout } = await run('redis-cli', [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    ...auth,
    ...args,
  ]);
  return stdout.trim();
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port below 55536 whose cluster bus port (port + 10000) is free too. Ports are picked
 * at random from 20000-45000, away from the kernel's ephemeral range.
 */
export async function freeRedisPort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    if ((await canBind(port)) && (await canBind(port + 10_000))) return port;
  }
  throw new Error('no free port pair (p, p+10000) found for redis-server');
}

/**
 * Starts `redis-server` with no persistence on a free port (or `port`) and waits until it
 * answers PING. `args` are extra command-line options, e.g. `['--requirepass', 'x']`.
 */
export async function startRedis(
  options: { args?: readonly string[]; port?: number; conf?: string; password?: string } = {},
): Promise<RedisProcess> {
  if (options.port !== undefined) return startRedisOn(options.port, options);
  // A port free a moment ago can be taken before redis-server binds it (tests run side by side):
  // then another free port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisOn(await freeRedisPort(), options);
    } catch (err) {
      if (attempt >= 5 || !String(err).includes('Address already in use')) throw err;
    }
  }
}

async function startRedisOn(
  port: number,
  options: { args?: readonly string[]; conf?: string; password?: string },
): Promise<RedisProcess> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-redis-'));
  const confArgs: string[] = [];
  if (options.conf !== undefined) {
    const file = path.join(dir, 'redis.conf');
    await writeFile(file, options.conf);
    confArgs.push(file);
  }
  const child = Child.start('redis-server', [
    ...confArgs,
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    ...(options.args ?? []),
  ]);
  const proc: RedisProcess = {
    port,
    pid: child.process.pid ?? -1,
    addr: `127.0.0.1:${port}`,
    dir,
    output: () => child.stdout + child.stderr,
    kill: async () => {
      child.kill();
      await child.exited;
    },
    stop: async () => {
      await proc.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(`redis-server on ${port} to answer PING`, async () => {
      if (child.process.exitCode !== null) throw new Error(`redis-server exited: ${proc.output()}`);
      return (await redisCli(port, ['ping'], options.password)) === 'PONG';
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return proc;
}

/** A Redis Cluster of `masters` masters (and `replicasPerMaster` replicas each) on free ports. */
export interface RedisClusterProcesses {
  readonly nodes: readonly RedisProcess[];
  /** Every node's `127.0.0.1:port`. */
  readonly addrs: readonly string[];
  stop(): Promise<void>;
}

export async function startCluster(
  options: { masters?: number; replicasPerMaster?: number } = {},
): Promise<RedisClusterProcesses> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const nodes: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      nodes.push(
        await startRedis({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
          ],
        }),
      );
    }
    const addrs = nodes.map((n) => n.addr);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...addrs,
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    // Every node must agree the cluster is up (slots assigned, gossip settled) before clients use it.
    await waitFor(
      'every cluster node to report cluster_state:ok',
      async () => {
        for (const n of nodes) {
          const info = await redisCli(n.port, ['cluster', 'info']);
          if (!info.includes('cluster_state:ok')) return false;
        }
        // Clients read the slot map (with each slot's replicas) from CLUSTER SLOTS of any node:
        // every node must list every node there.
        for (const n of nodes) {
          const slots = await redisCli(n.port, ['cluster', 'slots']);
          if (new Set(slots.match(/^[0-9a-f]{40}$/gm) ?? []).size < nodes.length) return false;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    return { nodes, addrs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A master, one replica and three sentinels watching it as `masterName`. */
export interface SentinelGroupProcesses {
  readonly masterName: string;
  readonly master: RedisProcess;
  readonly replica: RedisProcess;
  readonly sentinels: readonly RedisProcess[];
  /** The sentinels' `127.0.0.1:port`: a kvstore entry's `addrs`. */
  readonly addrs: readonly string[];
  /** `host:port` of the current master, as sentinel reports it. */
  currentMaster(): Promise<string>;
  stop(): Promise<void>;
}

export async function startSentinelGroup(
  options: { masterName?: string; password?: string; sentinelPassword?: string } = {},
): Promise<SentinelGroupProcesses> {
  const masterName = options.masterName ?? 'mymaster';
  const auth = options.password
    ? ['--requirepass', options.password, '--masterauth', options.password]
    : [];
  const all: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(all.map((p) => p.stop()));
  };
  try {
    const master = await startRedis({ args: auth, password: options.password });
    all.push(master);
    const replica = await startRedis({
      args: [...auth, '--replicaof', '127.0.0.1', String(master.port)],
      password: options.password,
    });
    all.push(replica);
    await waitFor(
      'the replica to sync with its master',
      async () =>
        (await redisCli(replica.port, ['info', 'replication'], options.password)).includes(
          'master_link_status:up',
        ),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const sentinels: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const conf = [
        `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${masterName} 1000`,
        `sentinel failover-timeout ${masterName} 10000`,
        `sentinel parallel-syncs ${masterName} 1`,
        ...(options.password ? [`sentinel auth-pass ${masterName} ${options.password}`] : []),
        ...(options.sentinelPassword
          ? [
              `requirepass ${options.sentinelPassword}`,
              `sentinel sentinel-pass ${options.sentinelPassword}`,
            ]
          : []),
        '',
      ].join('\n');
      const s = await startRedis({
        conf,
        args: ['--sentinel'],
        password: options.sentinelPassword,
      });
      sentinels.push(s);
      all.push(s);
    }
    // Sentinels find the replica through the master and each other through hello messages.
    await waitFor(
      'the sentinels to know the replica and each other',
      async () => {
        for (const s of sentinels) {
          const replicas = await redisCli(
            s.port,
            ['sentinel', 'replicas', masterName],
            options.sentinelPassword,
          );
          const peers = await redisCli(
            s.port,
            ['sentinel', 'sentinels', masterName],
            options.sentinelPassword,
          );
          if (!replicas.includes(String(replica.port))) return false;
          if (peers.split('\n').filter((l) => l === 'name').length < 2) return false;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const currentMaster = async (): Promise<string> => {
      const out = await redisCli(
        sentinels[0]!.port,
        ['sentinel', 'get-master-addr-by-name', masterName],
        options.sentinelPassword,
      );
      const [host, port] = out.split('\n');
      return `${host}:${port}`;
    };
    return {
      masterName,
      master,
      replica,
      sentinels,
      addrs: sentinels.map((s) => s.addr),
      currentMaster,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
