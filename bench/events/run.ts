/**
 * The cost of one event record: records per second encoded and written to a file through
 * entry-core's buffered outputs (console and json encodings), against pino writing an object
 * with the same fields to a file, in one run. Then the output path alone: records of ~1 KB, already
 * encoded, written through entry-core's file output, through sonic-boom as svcboot used it before
 * (minLength 0) and as pino's asynchronous destination uses it (minLength 4096).
 * Run: node --import tsx bench/events/run.ts (against the libs' dist/: see bench/README.md)
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { boot, EventFactory, makeScope, type EventEntry } from '@svcboot/entry-core';
// Not exported by the package: the output set the app's loggers and event entries write through.
import { OutputSet } from '../../libs/entry-core/dist/event/outputs.js';
import { assertBuilt } from '../lib/built.js';

assertBuilt('entry-core');

const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 200_000);
// The output-path loop makes records far faster than a disk takes them (hundreds of MB/s): its
// ~890-byte records stay under entry-core's per-output cap of 64 Mi queued characters, past
// which the output drops records by design.
const OUTPUT_RECORDS = Number(process.env['BENCH_OUTPUT_RECORDS'] ?? 60_000);
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
async function timeIt(
  label: string,
  file: string,
  write: (i: number) => void,
  flush: () => Promise<void>,
): Promise<{ label: string; perSec: number; bytes: number }> {
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

const scope = makeScope(
  'UTC',
  { appName: 'bench', appVersion: '1.0.0', entryName: 'greeter', entryType: 'GrpcEntry' },
  { arch: 'x64', domain: '*', hostname: 'h', localIP: '10.0.0.1', os: 'linux' },
);

const results = [];
for (const encoding of ['console', 'json'] as const) {
  const file = path.join(dir, `events-${encoding}.log`);
  // An event entry, so the same batched output as in production is used.
  const app = await boot({
    argv: [],
    env: {},
    configText: `event:\n  - name: ev\n    encoding: ${encoding}\n    outputPaths: ["${file}"]\n`,
  });
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
    (i) =>
      logger.info({
        eventId: `id-${i}`,
        requestId: `id-${i}`,
        app: scope.app,
        env: scope.env,
        payloads,
        remoteAddr: '127.0.0.1:50000',
        operation: '/api.v1.Greeter/Hello',
        resCode: 'OK',
        eventStatus: 'Ended',
      }),
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
  console.log(
    `| ${r.label} | ${Math.round(r.perSec).toLocaleString('en-US')} | ${(1e6 / r.perSec).toFixed(2)} | ${Math.round(r.bytes / RECORDS)} | ${(r.perSec / peer).toFixed(2)} |`,
  );
}

// The output path alone. Each record is a fresh ~1 KB concatenation (a rope, as an encoder's
// `+=` leaves it), written in bursts of `burst` records per event-loop turn: 16 is a busy
// server's handful of calls per turn, 1,024 the loop above.
const head = `${'x'.repeat(440)} eventId=`;
const tail = ` ${'y'.repeat(440)}\n`;
/** Bytes of OUTPUT_RECORDS records: the fixed parts plus the digits of 0..n-1. */
let expectedBytes = OUTPUT_RECORDS * (head.length + tail.length);
for (let i = 0; i < OUTPUT_RECORDS; i++) expectedBytes += String(i).length;

interface Writer {
  write: (s: string) => void;
  /** Resolves once every record is in the file. */
  close: () => Promise<void>;
}

/**
 * CPU time of the main thread alone (user + system, ms), leaving out libuv's thread pool where
 * the writes run: from /proc on Linux (10 ms ticks), undefined elsewhere.
 */
function mainThreadCpuMs(): number | undefined {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
      .split(') ')[1]!
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

async function timeOutput(
  label: string,
  burst: number,
  open: (file: string) => Writer | undefined,
): Promise<{ label: string; perSec: number; busyUs: number }> {
  const file = path.join(dir, 'output.log');
  let written = 0;
  const out = open(file) ?? {
    write: (s: string) => void (written += s.length),
    close: async () => undefined,
  };
  await new Promise((r) => setTimeout(r, 20)); // let the file open
  const cpu0 = mainThreadCpuMs();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < OUTPUT_RECORDS; i++) {
    out.write(head + i + tail);
    if (i % burst === burst - 1) await new Promise((r) => setImmediate(r));
  }
  await out.close();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = mainThreadCpuMs();
  const bytes = written || (await stat(file)).size;
  if (bytes !== expectedBytes)
    throw new Error(`${label}: ${bytes} bytes written, not the ${expectedBytes} of every record`);
  await rm(file, { force: true });
  return {
    label: `${label}, ${burst} per turn`,
    perSec: OUTPUT_RECORDS / seconds,
    busyUs:
      cpu0 === undefined || cpu1 === undefined ? NaN : ((cpu1 - cpu0) * 1000) / OUTPUT_RECORDS,
  };
}

function sonic(file: string, minLength: number): Writer {
  const d = pino.destination({ dest: file, sync: false, minLength });
  return {
    write: (s) => void d.write(s),
    close: () => new Promise<void>((resolve) => d.once('close', () => resolve()).end()),
  };
}

const outputs: { label: string; perSec: number; busyUs: number }[] = [];
for (const burst of [16, 1024]) {
  outputs.push(
    await timeOutput('no output (building the records, the loop)', burst, () => undefined),
  );
  outputs.push(
    await timeOutput('entry-core file output', burst, (file) => {
      const set = new OutputSet();
      const o = set.get(file);
      return { write: (s) => o.write(s), close: () => set.close() };
    }),
  );
  outputs.push(
    await timeOutput('sonic-boom, minLength 0 (svcboot before batching)', burst, (file) =>
      sonic(file, 0),
    ),
  );
  outputs.push(
    await timeOutput('sonic-boom, minLength 4096 (pino.destination)', burst, (file) =>
      sonic(file, 4096),
    ),
  );
}
console.log(`\n## output path\n`);
console.log(
  `> ${OUTPUT_RECORDS} records of ~${head.length + tail.length + 5} bytes, already encoded, per writer to a file; a burst of records per event-loop turn; the time runs until the writer has closed the file. Main thread µs/record: the main thread's CPU time (user + system, from /proc, 10 ms ticks) over the run per record, which leaves out the writes done on libuv's thread pool: what a server's calls compete with.\n`,
);
console.log('| writer | records/s | µs/record | main thread µs/record |');
console.log('|---|---:|---:|---:|');
for (const r of outputs)
  console.log(
    `| ${r.label} | ${Math.round(r.perSec).toLocaleString('en-US')} | ${(1e6 / r.perSec).toFixed(2)} | ${Number.isNaN(r.busyUs) ? 'n/a' : r.busyUs.toFixed(2)} |`,
  );

await rm(dir, { recursive: true, force: true });
