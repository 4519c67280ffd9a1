/**
 * What the outbound-client benchmarks (httpclient/, grpcclient/) share: a callee in another
 * process (so process.cpuUsage() of this one is the client's side alone), the client entry booted
 * from a config, an inbound call to pass, the CPU per call of a closed loop, the rounds, the table.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { boot, type App } from '@svcboot/entry-core';
import { nodeTsx } from './built.js';

export const CALLS = Number(process.env['BENCH_CALLS'] ?? 20_000);
export const IN_FLIGHT = 16;

/** Starts `server.ts` (it prints `READY <port>`) with tsx; resolves with its port. */
export async function startCallee(
  serverTs: string,
): Promise<{ port: number; child: ChildProcess }> {
  const [cmd, ...args] = nodeTsx(serverTs);
  const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  return { port, child };
}

/**
 * Boots an app with one client entry `echo` of `kind` (quiet logger, events to stderr, a 5 s
 * timeout): `address` is its address line (`baseUrl: …`, `target: …`), `extra` more option lines.
 */
export async function bootClient(kind: string, address: string, extra: string): Promise<App> {
  const app = await boot({
    argv: [],
    env: {},
    configText: `logger: [{ name: q, level: error }]
event: [{ name: e, outputPaths: [stderr] }]
${kind}:
  - name: echo
    ${address}
    loggerEntry: q
    eventEntry: e
    timeoutMs: 5000
${extra}`,
  });
  await app.bootstrap();
  return app;
}

/** The client's middleware option lines: a record per call (JSON, to /dev/null) and prom. */
export const CLIENT_MIDDLEWARE = `    middleware: { logging: { enabled: true, eventEncoding: json, eventOutputPaths: [/dev/null] }, prom: { enabled: true } }
`;

/** What a handler passes as its inbound call: entry-core's CallContext shape. */
export const INBOUND = {
  requestId: '7a0d5a49-7f6b-4f0e-9d0e-2a4b8f1d2c3e',
  deadline: Date.now() + 3_600_000,
  headers: { get: (n: string) => (n === 'x-tenant' ? 'acme' : undefined) },
};

/** One call: `done` once it is over, with the error when it failed. */
export type OneCall = (done: (err?: unknown) => void) => void;

/** CALLS calls, IN_FLIGHT at a time: this process's CPU (user + system) µs per call. */
export async function cpuPerCall(call: OneCall): Promise<number> {
  let sent = 0;
  const c0 = process.cpuUsage();
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    const one = (): void => {
      if (sent >= CALLS) return;
      sent++;
      call((err) => {
        if (err) return reject(err);
        if (++done === CALLS) resolve();
        else one();
      });
    };
    for (let i = 0; i < IN_FLIGHT; i++) one();
  });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / CALLS;
}

/**
 * Each row once to warm up, then rounds in A…Z Z…A order, twice; returns each row's best (lowest)
 * CPU per call, in the rows' order.
 */
export async function bestRounds(
  rows: Readonly<Record<string, () => Promise<number>>>,
): Promise<Map<string, number>> {
  const names = Object.keys(rows);
  const results = new Map<string, number[]>(names.map((n) => [n, []]));
  for (const n of names) await rows[n]!(); // warm-up
  const order = [...names, ...[...names].reverse()];
  for (let r = 0; r < 2; r++) for (const n of order) results.get(n)!.push(await rows[n]!());
  return new Map(names.map((n) => [n, Math.min(...results.get(n)!)]));
}

/** The markdown table: each row's CPU per call and what it costs over the first row. */
export function printTable(
  title: string,
  note: string,
  overWhat: string,
  best: Map<string, number>,
): void {
  console.log(`## ${title}\n`);
  console.log(`> ${note}\n`);
  console.log(`| client | CPU µs per call | over ${overWhat}, µs |`);
  console.log('|---|---:|---:|');
  const floor = best.values().next().value ?? 0;
  for (const [n, us] of best)
    console.log(`| ${n} | ${us.toFixed(1)} | ${(us - floor).toFixed(1)} |`);
}
