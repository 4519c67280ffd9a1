/**
 * The server processes of the gRPC load benchmarks (typed.ts, validate.ts): one module of
 * servers/ started with tsx on a free port (pinned to a CPU when asked), waited on until it
 * listens; stopped with SIGTERM, then SIGKILL after 10 s. And the rounds each loads them in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, isListening } from '@svcboot/testkit';
import { nodeTsx } from '../lib/built.js';
import { load, type LoadOptions, type LoadResult } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  port: number;
}

/**
 * Starts servers/`module`.ts with `env` (and PORT, NO_COLOR), under `taskset -c <cpu>` when `cpu`
 * is given; resolves once its port accepts. `what` names it in errors.
 */
export async function startServer(
  what: string,
  module: string,
  env: Record<string, string>,
  cpu?: string,
): Promise<ServerProcess> {
  const port = await freePort();
  const cmd = nodeTsx(path.join(here, 'servers', `${module}.ts`));
  const [file, ...args] = cpu !== undefined ? ['taskset', '-c', cpu, ...cmd] : cmd;
  const child = spawn(file!, args, {
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  while (!(await isListening(port))) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${what} did not listen on ${port} within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, port };
}

/** SIGTERM to each, then SIGKILL to those still running 10 s later. */
export async function stopServers(servers: readonly ServerProcess[]): Promise<void> {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await Promise.race([once(s.child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
  }
}

/**
 * Loads each server on each protocol: once for 2 s to warm up, then `rounds` rounds of `seconds`,
 * the servers' order rotated each round. `options` are load()'s besides the server's; a result
 * with failed requests throws when `noErrors`. Returns the results by `<protocol>|<key(server)>`,
 * one a round, and the load average after the warm-up.
 */
export async function loadRounds<S extends ServerProcess>(
  servers: readonly S[],
  key: (s: S) => string,
  options: Omit<LoadOptions, 'protocol' | 'port' | 'pid' | 'seconds'> & {
    seconds: number;
    rounds: number;
    noErrors?: boolean;
  },
): Promise<{ results: Map<string, LoadResult[]>; loadAtStart: number }> {
  const { rounds, seconds, noErrors, ...rest } = options;
  const run = (s: S, protocol: 'grpc' | 'http', secs: number): Promise<LoadResult> =>
    load({ ...rest, protocol, port: s.port, pid: s.child.pid!, seconds: secs });
  for (const s of servers) for (const p of ['grpc', 'http'] as const) await run(s, p, 2);
  const loadAtStart = os.loadavg()[0]!;
  const results = new Map<string, LoadResult[]>();
  for (let r = 0; r < rounds; r++) {
    const order = servers.map((_, i) => servers[(i + r) % servers.length]!);
    for (const p of ['grpc', 'http'] as const)
      for (const s of order) {
        const res = await run(s, p, seconds);
        if (noErrors && res.errors > 0)
          throw new Error(`${key(s)} ${p}: ${res.errors} failed requests`);
        const k = `${p}|${key(s)}`;
        results.set(k, [...(results.get(k) ?? []), res]);
      }
  }
  return { results, loadAtStart };
}
