/**
 * What one call record of the logging middleware costs the process, apart from the call: an
 * Event begun and finished as the middleware does, its console encoding (entry-core's
 * encodeConsole, the gRPC bench's record), and its write through entry-core's output (the batch
 * joined, made a Buffer, written by fs.write from the thread pool), for three targets: none (the
 * encoding only), /dev/null (the output's JavaScript, no file), and a file. RECORD_COUNT records
 * (300,000), RECORDS_PER_TURN a turn (20: the records of a loaded server's turn), the process's
 * CPU time (user + system, all threads: the thread pool's writes count) per record.
 *
 * `node --import tsx grpc/record-cost.ts [none|null|file]...` from bench/ (default: all three,
 * alternated twice), pinned with `taskset -c 1` to compare with the gRPC bench's servers.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventFactory } from '../../libs/entry-core/src/event/event-factory.js';
import { EventLogger } from '../../libs/entry-core/src/event/event-logger.js';
import { makeScope } from '../../libs/entry-core/src/event/encode.js';
import { OutputSet } from '../../libs/entry-core/src/event/outputs.js';
import { newRequestId } from '../../libs/entry-core/src/middleware/request-id.js';

const COUNT = Number(process.env['RECORD_COUNT'] ?? 300_000);
const PER_TURN = Number(process.env['RECORDS_PER_TURN'] ?? 20);
const targets = process.argv.slice(2);

if (targets.length !== 1) {
  // The parent: one process per measurement, the targets alternated.
  const list = targets.length > 0 ? targets : ['none', 'null', 'file', 'none', 'null', 'file'];
  const self = fileURLToPath(import.meta.url);
  for (const t of list) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', self, t], { encoding: 'utf8' });
    process.stdout.write(r.stdout + r.stderr);
  }
} else {
  const target = targets[0]!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'record-cost-'));
  const outputs = new OutputSet();
  const out =
    target === 'none'
      ? [{ write: (_: string) => undefined }]
      : [outputs.get(target === 'null' ? '/dev/null' : path.join(dir, 'records.log'))];
  const scope = makeScope(
    'UTC',
    { appName: 'bench-grpc', appVersion: '1.0.0', entryName: 'greeter', entryType: 'gRPCEntry' },
    { arch: 'x64', domain: '*', hostname: os.hostname(), localIP: '127.0.0.1', os: 'linux' },
  );
  const events = new EventFactory(new EventLogger('console', out), scope);
  const payloads =
    '"apiMethod":"GET","apiPath":"/v1/hello","apiProtocol":"HTTP/1.1","apiQuery":"","userAgent":"h2load nghttp2/1.52.0"';
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const turn = (): void => {
      for (let k = 0; k < PER_TURN && n < COUNT; k++, n++) {
        const id = newRequestId();
        const e = events.begin('GET /v1/hello', id, Date.now(), process.hrtime.bigint());
        e.requestId = id;
        e.remoteAddr = '127.0.0.1:40000';
        e.payloadsJson = payloads;
        events.write(e.finish('200'));
      }
      if (n < COUNT) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  await outputs.close();
  const cpu = process.cpuUsage(cpu0);
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `${target.padEnd(4)} ${((cpu.user + cpu.system) / COUNT).toFixed(2)} µs CPU a record (wall ${(((performance.now() - t0) * 1000) / COUNT).toFixed(2)} µs), ${COUNT} records`,
  );
}
