/**
 * The client-side CPU cost of one outbound unary call: a grpcclient entry's client (its
 * interceptor: deadline, propagation, the call driver; then with an inbound call, the breaker and a
 * retry policy; then the logging and prom middlewares)
 * against a bare grpc-js Client on the same kind of channel. The callee is a bare grpc-js server
 * in another process, so process.cpuUsage() of this process is the client's side alone.
 * Run: node --import tsx bench/grpcclient/run.ts
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, Metadata, credentials } from '@grpc/grpc-js';
import { grpcClient } from '@svcboot/entry-grpcclient';
import { assertBuilt } from '../lib/built.js';
import {
  CALLS,
  CLIENT_MIDDLEWARE,
  INBOUND,
  IN_FLIGHT,
  bestRounds,
  bootClient,
  cpuPerCall,
  printTable,
  startCallee,
} from '../lib/client-cost.js';
import { rawUnaryClient } from '../lib/raw-unary.js';

assertBuilt('entry-core', 'entry-grpc', 'entry-grpcclient');

const here = path.dirname(fileURLToPath(import.meta.url));
const { port, child } = await startCallee(path.join(here, 'server.ts'));

const EchoClient = rawUnaryClient('Echo', 'call', '/bench.v1.Echo/Call');
type Echo = { call(req: Buffer, md: Metadata, cb: (err: Error | null) => void): void };

const address = `target: static:///127.0.0.1:${port}`;
const plainApp = await bootClient('grpcclient', address, '');
const full = `    loadBalancing: round_robin
    retry: { maxAttempts: 3, retryableCodes: [UNAVAILABLE] }
    breaker: { enabled: true }
    propagate: { metadata: [x-tenant] }
`;
const fullApp = await bootClient('grpcclient', address, full);
// The same with the client's middleware: a record per call (JSON, to /dev/null) and the prom
// middleware's svc_call_* and grpc_client_* families.
const middlewareApp = await bootClient('grpcclient', address, `${full}${CLIENT_MIDDLEWARE}`);

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
    make: () => grpcClient(fullApp, 'echo').plain(EchoClient, INBOUND) as unknown as Echo,
    perCall: false,
  },
  'the same + logging + prom middleware': {
    make: () => grpcClient(middlewareApp, 'echo').plain(EchoClient, INBOUND) as unknown as Echo,
    perCall: false,
  },
  'the same, a new client per call (one per inbound call)': {
    make: () => grpcClient(fullApp, 'echo').plain(EchoClient, INBOUND) as unknown as Echo,
    perCall: true,
  },
};

const payload = Buffer.alloc(16);
const rows = Object.fromEntries(
  Object.entries(clients).map(([n, { make, perCall }]) => [
    n,
    () => {
      const shared = make();
      return cpuPerCall((done) =>
        (perCall ? make() : shared).call(payload, new Metadata(), (err) => done(err)),
      );
    },
  ]),
);
const best = await bestRounds(rows);

await plainApp.shutdown('bench');
await fullApp.shutdown('bench');
await middlewareApp.shutdown('bench');
(bare as unknown as Client).close();
(bareRetry as unknown as Client).close();
child.kill();

printTable(
  'grpcclient',
  `node ${process.version}; callee: a bare grpc-js server in another process on loopback; ${CALLS} unary calls per round, ${IN_FLIGHT} in flight, 16-byte messages (identity codec); clients in A…F F…A order, twice; the client process's CPU (user + system) per call, best round.`,
  'bare grpc-js',
  best,
);
process.exit(0);
