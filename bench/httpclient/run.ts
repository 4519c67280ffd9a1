/**
 * The client-side CPU cost of one outbound HTTP GET: an httpclient entry's `fetch` (propagation,
 * the call driver; then with an inbound call, the breaker and a retry policy; then the logging and
 * prom middlewares) against Node's bare `fetch` to the same server. The callee is a bare node:http
 * server in another process, so process.cpuUsage() of this process is the client's side alone.
 * Run: node --import tsx bench/httpclient/run.ts
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpClient } from '@svcboot/entry-httpclient';
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

assertBuilt('entry-core', 'entry-httpclient');

const here = path.dirname(fileURLToPath(import.meta.url));
const { port, child } = await startCallee(path.join(here, 'server.ts'));
const base = `http://127.0.0.1:${port}`;
const address = `baseUrl: ${base}`;

const full = `    retry: { maxAttempts: 2 }
    breaker: { enabled: true }
    propagate: { metadata: [x-tenant] }
`;
const plainApp = await bootClient('httpclient', address, '');
const fullApp = await bootClient('httpclient', address, full);
const middlewareApp = await bootClient('httpclient', address, `${full}${CLIENT_MIDDLEWARE}`);

/** Each row: one GET, its body read. */
const gets: Record<string, () => Promise<Response>> = {
  'bare fetch': () => fetch(`${base}/v1/x`),
  'bare fetch + AbortSignal.timeout(5000)': () =>
    fetch(`${base}/v1/x`, { signal: AbortSignal.timeout(5000) }),
  'httpclient, no inbound call': () => httpClient(plainApp, 'echo').fetch('/v1/x'),
  'httpclient, inbound call + breaker + retry policy': () =>
    httpClient(fullApp, 'echo').fetch('/v1/x', { call: INBOUND, route: '/v1/x' }),
  'the same + logging + prom middleware': () =>
    httpClient(middlewareApp, 'echo').fetch('/v1/x', { call: INBOUND, route: '/v1/x' }),
};
const rows = Object.fromEntries(
  Object.entries(gets).map(([n, get]) => [
    n,
    () =>
      cpuPerCall((done) => {
        get()
          .then((res) => res.arrayBuffer())
          .then(() => done(), done);
      }),
  ]),
);
const best = await bestRounds(rows);

await plainApp.shutdown('bench');
await fullApp.shutdown('bench');
await middlewareApp.shutdown('bench');
child.kill();

printTable(
  'httpclient',
  `node ${process.version}; callee: a bare node:http server in another process on loopback (keep-alive); ${CALLS} GETs per round, ${IN_FLIGHT} in flight, 16-byte bodies read whole; rows in A…E E…A order, twice; the client process's CPU (user + system) per call, best round.`,
  'bare fetch',
  best,
);
process.exit(0);
