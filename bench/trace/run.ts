/**
 * The cost of `middleware.trace` per call on a gateway `GET /v1/hello` (demo Greeter, logging,
 * prom and meta on in every server): tracing off (the peer), on with every trace sampled, and on
 * with 1 % sampled, spans exported over OTLP/HTTP protobuf to a sink in this process that
 * counts and drops them. Settings: BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS,
 * BENCH_WARMUP_SECONDS (lib/http-compare.ts).
 *
 * `node --import tsx trace/run.ts` from bench/ (the libs run from dist/, built first when stale).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compareRoutes,
  compareSettings,
  howLine,
  httpComparisonTable,
  startTargets,
  stopTarget,
  type TargetSpec,
} from '../lib/http-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const settings = compareSettings({ seconds: 5, rounds: 3, connections: 10, warmupSeconds: 2 });

let exports = 0;
let bytes = 0;
const sink = createServer((req, res) => {
  req.on('data', (c: Buffer) => {
    bytes += c.length;
  });
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const otlpUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-bench-trace-'));

const target = (name: string, trace: string, peer = false): TargetSpec => ({
  name,
  peer,
  cwd: here,
  args: [path.join(here, 'server.ts')],
  env: { TRACE: trace, OTLP_URL: otlpUrl, EVENTS_FILE: path.join(dir, `events-${trace}.log`) },
  ready: async (base) => (await fetch(`${base}/v1/hello`).catch(() => undefined))?.ok === true,
});

const targets = await startTargets([
  target('trace off', 'off', true),
  target('trace on, 100 % sampled', '1'),
  target('trace on, 1 % sampled', '0.01'),
]);
try {
  const rows = await compareRoutes(
    targets,
    [{ route: 'gateway GET /v1/hello', request: () => ({ path: '/v1/hello' }) }],
    settings,
  );
  console.log(howLine(settings, 'Spans exported over OTLP/HTTP protobuf to a local sink.'));
  console.log('');
  console.log(httpComparisonTable(rows));
  const off = rows.find((r) => r.peer)!;
  for (const r of rows.filter((x) => !x.peer))
    console.log(
      `${r.target}: +${(r.cpuUsPerReq - off.cpuUsPerReq).toFixed(1)} µs server CPU per call over trace off`,
    );
} finally {
  await Promise.all(targets.map(stopTarget));
  console.log(`OTLP sink: ${exports} export requests, ${bytes} bytes`);
  sink.close();
  await rm(dir, { recursive: true, force: true });
}
