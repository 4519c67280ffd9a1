/**
 * The cost of one event record: records per second encoded and written to a file through
 * entry-core's buffered outputs (console and json encodings), against pino writing an object
 * with the same fields to a file, in one run.
 * Run: node --conditions=svcboot-source --import tsx bench/events/run.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { boot, EventFactory, makeScope, type EventEntry } from '@svcboot/entry-core';

const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 200_000);
const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-bench-events-'));

const payloads = {
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  grpcMethod: 'Hello',
  grpcService: 'api.v1.Greeter',
  grpcType: 'UnaryServer',
  gwMethod: 'GET',
  gwPath: '/v1/hello',
  gwScheme: 'http',
  gwUserAgent: 'curl/8.5.0',
  userAgent: 'grpc-node-js/1.14.0',
};

/** Writes RECORDS records through `write`, then waits until `flush` has put them on disk. */
async function timeIt(label: string, file: string, write: (i: number) => void, flush: () => Promise<void>): Promise<{ label: string; perSec: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < RECORDS; i++) {
    write(i);
    // Let the asynchronous writer drain now and then, as a server's event loop would.
    if ((i & 1023) === 0) await new Promise((r) => setImmediate(r));
  }
  await flush();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { label, perSec: RECORDS / seconds, bytes: (await stat(file)).size };
}

const scope = makeScope('UTC', { appName: 'bench', appVersion: '1.0.0', entryName: 'greeter', entryType: 'GrpcEntry' }, { arch: 'x64', domain: '*', hostname: 'h', localIP: '10.0.0.1', os: 'linux' });

const results = [];
for (const encoding of ['console', 'json'] as const) {
  const file = path.join(dir, `events-${encoding}.log`);
  // An event entry, so the same buffered sonic-boom output as in production is used.
  const app = await boot({ argv: [], env: {}, configText: `event:\n  - name: ev\n    encoding: ${encoding}\n    outputPaths: ["${file}"]\n` });
  const factory = new EventFactory(app.entry<EventEntry>('ev', 'event').eventLogger, scope);
  results.push(
    await timeIt(
      `svcboot event record (${encoding})`,
      file,
      () => {
        const e = factory.begin('/api.v1.Greeter/Hello');
        e.requestId = e.eventId;
        e.remoteAddr = '127.0.0.1:50000';
        e.payloads = { ...payloads };
        factory.write(e.finish('OK'));
      },
      () => app.shutdown().then(() => undefined),
    ),
  );
}

const pinoFile = path.join(dir, 'pino.log');
const dest = pino.destination({ dest: pinoFile, sync: false, minLength: 4096 });
const logger = pino({ base: undefined }, dest);
results.push(
  await timeIt(
    'pino info(object) (peer)',
    pinoFile,
    (i) => logger.info({ eventId: `id-${i}`, requestId: `id-${i}`, app: scope.app, env: scope.env, payloads, remoteAddr: '127.0.0.1:50000', operation: '/api.v1.Greeter/Hello', resCode: 'OK', eventStatus: 'Ended' }),
    () => new Promise<void>((resolve) => dest.flush(() => resolve())),
  ),
);

const peer = results[results.length - 1]!.perSec;
console.log(`## event records\n`);
console.log(
  `> node ${process.version}, one process, ${RECORDS} records per writer to a file in ${os.tmpdir()}, yielding to the event loop every 1,024 records as a server would; the time runs until the writer has flushed everything to the file. One run per writer.\n`,
);
console.log('| writer | records/s | µs/record | bytes/record | ratio to pino |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  console.log(`| ${r.label} | ${Math.round(r.perSec).toLocaleString('en-US')} | ${(1e6 / r.perSec).toFixed(2)} | ${Math.round(r.bytes / RECORDS)} | ${(r.perSec / peer).toFixed(2)} |`);
}
await rm(dir, { recursive: true, force: true });
