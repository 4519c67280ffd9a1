/**
 * The client-side CPU cost of one outbound HTTP GET: an httpclient entry's `fetch` (propagation,
 * the call driver; then with an inbound call, the breaker and a retry policy; then the logging and
 * prom middlewares) against Node's bare `fetch` to the same server. The callee is a bare node:http
 * server in another process, so process.cpuUsage() of this process is the client's side alone.
 * Run: node --import tsx bench/httpclient/run.ts
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boot, type App } from '@svcboot/entry-core';
import { httpClient } from '@svcboot/entry-httpclient';
import { assertBuilt, nodeTsx } from '../lib/built.js';

assertBuilt('entry-core', 'entry-httpclient');

const CALLS = Number(process.env['BENCH_CALLS'] ?? 20_000);
const IN_FLIGHT = 16;
const here = path.dirname(fileURLToPath(import.meta.url));

const [cmd, ...args] = nodeTsx(path.join(here, 'server.ts'));
const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /READY (\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
});
const base = `http://127.0.0.1:${port}`;

async function bootClient(extra: string): Promise<App> {
  const app = await boot({
    argv: [],
    env: {},
    configText: `logger: [{ name: q, level: error }]
event: [{ name: e, outputPaths: [stderr] }]
httpclient:
  - name: echo
    baseUrl: ${base}
    loggerEntry: q
    eventEntry: e
    timeoutMs: 5000
${extra}`,
  });
  await app.bootstrap();
  return app;
}
const full = `    retry: { maxAttempts: 2 }
    breaker: { enabled: true }
    propagate: { metadata: [x-tenant] }
`;
const plainApp = await bootClient('');
const fullApp = await bootClient(full);
const middlewareApp = await bootClient(
  `${full}    middleware: { logging: { enabled: true, eventEncoding: json, eventOutputPaths: [/dev/null] }, prom: { enabled: true } }
`,
);
// What a handler passes as its inbound call: entry-core's CallContext shape.
const inbound = {
  requestId: '7a0d5a49-7f6b-4f0e-9d0e-2a4b8f1d2c3e',
  deadline: Date.now() + 3_600_000,
  headers: { get: (n: string) => (n === 'x-tenant' ? 'acme' : undefined) },
};

/** Each row: one GET, its body read. */
const rows: Record<string, () => Promise<Response>> = {
  'bare fetch': () => fetch(`${base}/v1/x`),
  'bare fetch + AbortSignal.timeout(5000)': () =>
    fetch(`${base}/v1/x`, { signal: AbortSignal.timeout(5000) }),
  'httpclient, no inbound call': () => httpClient(plainApp, 'echo').fetch('/v1/x'),
  'httpclient, inbound call + breaker + retry policy': () =>
    httpClient(fullApp, 'echo').fetch('/v1/x', { call: inbound, route: '/v1/x' }),
  'the same + logging + prom middleware': () =>
    httpClient(middlewareApp, 'echo').fetch('/v1/x', { call: inbound, route: '/v1/x' }),
};

async function cpuPerCall(get: () => Promise<Response>): Promise<number> {
  let sent = 0;
  const c0 = process.cpuUsage();
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    const one = (): void => {
      if (sent >= CALLS) return;
      sent++;
      get()
        .then((res) => res.arrayBuffer())
        .then(() => {
          if (++done === CALLS) resolve();
          else one();
        }, reject);
    };
    for (let i = 0; i < IN_FLIGHT; i++) one();
  });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / CALLS;
}

const names = Object.keys(rows);
const results = new Map<string, number[]>(names.map((n) => [n, []]));
for (const n of names) await cpuPerCall(rows[n]!); // warm-up
// A…E E…A, twice.
const order = [...names, ...[...names].reverse()];
for (let r = 0; r < 2; r++) for (const n of order) results.get(n)!.push(await cpuPerCall(rows[n]!));

await plainApp.shutdown('bench');
await fullApp.shutdown('bench');
await middlewareApp.shutdown('bench');
child.kill();

console.log('## httpclient\n');
console.log(
  `> node ${process.version}; callee: a bare node:http server in another process on loopback (keep-alive); ${CALLS} GETs per round, ${IN_FLIGHT} in flight, 16-byte bodies read whole; rows in A…E E…A order, twice; the client process's CPU (user + system) per call, best round.\n`,
);
console.log('| client | CPU µs per call | over bare fetch, µs |');
console.log('|---|---:|---:|');
const floor = Math.min(...results.get(names[0]!)!);
for (const n of names) {
  const best = Math.min(...results.get(n)!);
  console.log(`| ${n} | ${best.toFixed(1)} | ${(best - floor).toFixed(1)} |`);
}
process.exit(0);
