/**
 * The client-side CPU cost of one outbound unary call: a grpcclient entry's client (its
 * interceptor: deadline, propagation, the call driver; then with an inbound call, the breaker and a
 * retry policy; then the logging and prom middlewares)
 * against a bare grpc-js Client on the same kind of channel. The callee is a bare grpc-js server
 * in another process, so process.cpuUsage() of this process is the client's side alone.
 * Run: node --import tsx bench/grpcclient/run.ts
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, Metadata, credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { grpcClient } from '@svcboot/entry-grpcclient';
import { assertBuilt, nodeTsx } from '../lib/built.js';

assertBuilt('entry-core', 'entry-grpc', 'entry-grpcclient');

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

const identity = (b: Buffer): Buffer => b;
const EchoClient = makeGenericClientConstructor(
  {
    call: {
      path: '/bench.v1.Echo/Call',
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  },
  'Echo',
);
type Echo = { call(req: Buffer, md: Metadata, cb: (err: Error | null) => void): void };

async function bootClient(extra: string): Promise<App> {
  const app = await boot({
    argv: [],
    env: {},
    configText: `logger: [{ name: q, level: error }]
event: [{ name: e, outputPaths: [stderr] }]
grpcclient:
  - name: echo
    target: static:///127.0.0.1:${port}
    loggerEntry: q
    eventEntry: e
    timeoutMs: 5000
${extra}`,
  });
  await app.bootstrap();
  return app;
}
const plainApp = await bootClient('');
const full = `    loadBalancing: round_robin
    retry: { maxAttempts: 3, retryableCodes: [UNAVAILABLE] }
    breaker: { enabled: true }
    propagate: { metadata: [x-tenant] }
`;
const fullApp = await bootClient(full);
// The same with the client's middleware: a record per call (JSON, to /dev/null) and the prom
// middleware's svc_call_* and grpc_client_* families.
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

const bare = new EchoClient(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as Echo;
// The same service config as the full entry (round_robin, a retry policy, retry throttling):
// grpc-js's own cost of retries, which the entry's rows include.
const bareRetry = new EchoClient(`ipv4:127.0.0.1:${port}`, credentials.createInsecure(), {
  'grpc.service_config': JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: [
      {
        name: [{}],
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.05s',
          maxBackoff: '1s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
    retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
  }),
}) as unknown as Echo;
/** Each row: the client to use for one call (`perCall`: made anew for each, as per inbound call). */
const clients: Record<string, { make: () => Echo; perCall: boolean }> = {
  'bare grpc-js client': { make: () => bare, perCall: false },
  'bare grpc-js client, round_robin + retry policy': { make: () => bareRetry, perCall: false },
  'grpcclient, no inbound call': {
    make: () => grpcClient(plainApp, 'echo').plain(EchoClient) as unknown as Echo,
    perCall: false,
  },
  'grpcclient, inbound call + breaker + round_robin + retry policy': {
    make: () => grpcClient(fullApp, 'echo').plain(EchoClient, inbound) as unknown as Echo,
    perCall: false,
  },
  'the same + logging + prom middleware': {
    make: () => grpcClient(middlewareApp, 'echo').plain(EchoClient, inbound) as unknown as Echo,
    perCall: false,
  },
  'the same, a new client per call (one per inbound call)': {
    make: () => grpcClient(fullApp, 'echo').plain(EchoClient, inbound) as unknown as Echo,
    perCall: true,
  },
};

const payload = Buffer.alloc(16);
async function cpuPerCall({
  make,
  perCall,
}: {
  make: () => Echo;
  perCall: boolean;
}): Promise<number> {
  const shared = make();
  let sent = 0;
  const c0 = process.cpuUsage();
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    const one = (): void => {
      if (sent >= CALLS) return;
      sent++;
      (perCall ? make() : shared).call(payload, new Metadata(), (err) => {
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

const names = Object.keys(clients);
const results = new Map<string, number[]>(names.map((n) => [n, []]));
for (const n of names) await cpuPerCall(clients[n]!); // warm-up
// A…E E…A, twice.
const order = [...names, ...[...names].reverse()];
for (let r = 0; r < 2; r++)
  for (const n of order) results.get(n)!.push(await cpuPerCall(clients[n]!));

await plainApp.shutdown('bench');
await fullApp.shutdown('bench');
await middlewareApp.shutdown('bench');
(bare as unknown as Client).close();
(bareRetry as unknown as Client).close();
child.kill();

console.log('## grpcclient\n');
console.log(
  `> node ${process.version}; callee: a bare grpc-js server in another process on loopback; ${CALLS} unary calls per round, ${IN_FLIGHT} in flight, 16-byte messages (identity codec); clients in A…F F…A order, twice; the client process's CPU (user + system) per call, best round.\n`,
);
console.log('| client | CPU µs per call | over bare grpc-js, µs |');
console.log('|---|---:|---:|');
const base = Math.min(...results.get(names[0]!)!);
for (const n of names) {
  const best = Math.min(...results.get(n)!);
  console.log(`| ${n} | ${best.toFixed(1)} | ${(best - base).toFixed(1)} |`);
}
process.exit(0);
