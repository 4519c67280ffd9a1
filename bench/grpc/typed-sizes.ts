/**
 * Typed against untyped at three message sizes (issue #41, part 2: "the typed path within 5 % of
 * the untyped one for a small, a 1 KB nested and a 100 KB message"): servers/typed-sizes.ts
 * serving bench.v1.Sizes.Echo (the request Doc answered as it came) from the proto-loader
 * definition (protobufjs codec) and, with SVC_TYPED=1, from protoc-gen-es code (the typed codec),
 * no middleware; gRPC unary and the gateway (POST /v1/echo, the Doc as JSON).
 *
 * Two measures, as tools/scripts/ratio/ratio-check.ts takes them (its method, from
 * tools/scripts/ratio/measure.ts; the servers and the client are this file's):
 * - instructions per call: each server under `valgrind --tool=callgrind --instr-atstart=no`, node
 *   interpreted only (the ratio check's flags), warm-up calls with the instrumentation off, then
 *   WINDOWS windows of calls one after the other (`callgrind_control -i on`, the calls, `-i off`,
 *   `-d`), the least window;
 * - server CPU time with the JIT on: both servers pinned to CPU 1 (this process to CPU 0), warm-up,
 *   then ROUNDS rounds of calls, typed and untyped alternating (the order swapped each round); a
 *   server's CPU from /proc/<pid>/task/∗/schedstat; the median of the rounds' typed ÷ untyped.
 *
 *   node --import tsx bench/grpc/typed-sizes.ts   (from the repository root, the libs' dist/ built:
 *   tools/scripts/ratio-check.sh builds them; TYPED_SIZES=small,1k,100k; TYPED_PARTS=instr,cpu;
 *   TYPED_PROTOCOLS=grpc,http; TYPED_WINDOWS, 3; TYPED_ROUNDS, 5; TYPED_CPU_SCALE, 1)
 *
 * Calls per window / warm-up / CPU round by size: small 100 / 500 / 2000, 1k 50 / 300 / 1000,
 * 100k 5 / 30 / 60. Each answer is checked (the gRPC answer's bytes are the request's length; the
 * gateway's JSON has the request's id).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, toBinary, toJsonString } from '@bufbuild/protobuf';
import { type Client, credentials } from '@grpc/grpc-js';
import {
  cpuNs,
  instructionWindows,
  MeasureError,
  median,
  pinThisProcess,
  type ServerProcess,
  startServer,
  stopServer,
} from '../../tools/scripts/ratio/measure.js';
import { type Doc, DocSchema, State } from './servers/gen/bench/v1/sizes_pb.js';
import { rawUnaryClient } from '../lib/raw-unary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const serverFile = path.join(here, 'servers/typed-sizes.ts');
const WINDOWS = Number(process.env['TYPED_WINDOWS'] ?? 3);
const ROUNDS = Number(process.env['TYPED_ROUNDS'] ?? 5);
/** Multiplies the CPU part's calls per round (more calls: a GC averages out). */
const CPU_SCALE = Number(process.env['TYPED_CPU_SCALE'] ?? 1);
const parts = (process.env['TYPED_PARTS'] ?? 'instr,cpu').split(',');
const protocols = (process.env['TYPED_PROTOCOLS'] ?? 'grpc,http').split(',') as Protocol[];

type Protocol = 'grpc' | 'http';
type Size = 'small' | '1k' | '100k';

/** A Doc of `items` items (deterministic). */
export function docOf(items: number): Doc {
  const meta = (i: number) => ({
    author: `author-${i}`,
    created: 1_700_000_000_000n + BigInt(i),
    counts: { views: 100 + i, likes: i },
    state: State.PUBLISHED,
  });
  return create(DocSchema, {
    id: `doc-${items}`,
    version: 42n,
    items: Array.from({ length: items }, (_, i) => ({
      name: `item number ${i}`,
      price: 9.99 + i,
      qty: i + 1,
      active: i % 2 === 0,
      tags: ['red', `tag-${i}`],
      meta: meta(i),
      delta: BigInt(-i),
      code: 0xc0de + i,
    })),
    labels: { env: 'prod', team: 'payments', region: 'eu-west-1', tier: 'gold' },
    meta: meta(0),
    scores: Array.from({ length: 20 }, (_, i) => i * 37 - 100),
    blob: new Uint8Array(64).map((_, i) => i),
    kind: { case: 'note', value: 'a note on the kind oneof' },
    state: State.DRAFT,
    comment: 'explicitly present',
    ratio: 0.5,
  });
}

export const SIZES: Record<Size, { doc: Doc; window: number; warmup: number; cpuCalls: number }> = {
  small: { doc: create(DocSchema, { id: 'doc-1' }), window: 100, warmup: 500, cpuCalls: 2000 },
  '1k': { doc: docOf(8), window: 50, warmup: 300, cpuCalls: 1000 },
  '100k': { doc: docOf(1000), window: 5, warmup: 30, cpuCalls: 60 },
};
const sizes = (process.env['TYPED_SIZES'] ?? 'small,1k,100k').split(',') as Size[];

class BenchError extends MeasureError {}

interface Running extends ServerProcess {
  typed: boolean;
  grpc: Client;
  agent: http.Agent;
}

async function start(typed: boolean, cgDir?: string): Promise<Running> {
  const server = await startServer({
    file: serverFile,
    name: typed ? 'typed' : 'untyped',
    what: `the ${typed ? 'typed' : 'untyped'} server`,
    label: 'typed-sizes',
    cwd: root,
    env: { SVC_SHED_LOOP: '0', SVC_TYPED: typed ? '1' : '0' },
    callgrindDir: cgDir,
  });
  const Sizes = rawUnaryClient('Sizes', 'Echo', '/bench.v1.Sizes/Echo');
  return {
    typed,
    ...server,
    grpc: new Sizes(`127.0.0.1:${server.port}`, credentials.createInsecure(), {
      'grpc.max_receive_message_length': -1,
    }),
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
  };
}

async function stop(r: Running): Promise<void> {
  r.grpc.close();
  r.agent.destroy();
  await stopServer(r.child);
}

interface Payload {
  size: Size;
  bytes: Buffer;
  json: string;
  id: string;
}

function callGrpc(r: Running, p: Payload): Promise<void> {
  return new Promise((resolve, reject) => {
    (
      r.grpc as unknown as {
        Echo(req: Buffer, cb: (err: Error | null, res: Buffer) => void): void;
      }
    ).Echo(p.bytes, (err, res) => {
      if (err) reject(new BenchError(`typed-sizes: Echo (${p.size}) failed: ${err.message}`));
      else if (res.length !== p.bytes.length)
        reject(
          new BenchError(
            `typed-sizes: Echo (${p.size}) answered ${res.length} bytes for ${p.bytes.length}`,
          ),
        );
      else resolve();
    });
  });
}

function callHttp(r: Running, p: Payload): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: r.port,
        method: 'POST',
        path: '/v1/echo',
        agent: r.agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          if (res.statusCode !== 200 || !body.includes(`"${p.id}"`))
            reject(
              new BenchError(
                `typed-sizes: POST /v1/echo (${p.size}) answered ${res.statusCode} ${body.slice(0, 300)}`,
              ),
            );
          else resolve();
        });
      },
    );
    req.once('error', (e) => reject(new BenchError(`typed-sizes: POST /v1/echo: ${e.message}`)));
    req.end(p.json);
  });
}

async function calls(r: Running, protocol: Protocol, p: Payload, n: number): Promise<void> {
  const one = protocol === 'grpc' ? callGrpc : callHttp;
  for (let i = 0; i < n; i++) await one(r, p);
}

const log = (line: string): void => void process.stderr.write(`typed-sizes: ${line}\n`);

const payloads: Payload[] = sizes.map((size) => {
  const doc = SIZES[size].doc;
  return {
    size,
    bytes: Buffer.from(toBinary(DocSchema, doc)),
    json: toJsonString(DocSchema, doc),
    id: doc.id,
  };
});

/** `<typed|untyped>|<protocol>|<size>` → instructions per call. */
async function measureInstructions(): Promise<Map<string, number>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'typed-sizes-cg-'));
  const out = new Map<string, number>();
  const running: Running[] = [];
  try {
    // Start-up under valgrind is the slow part: both at once (each kept for stop() as it comes).
    const up = await Promise.allSettled([start(false, dir), start(true, dir)]);
    for (const u of up) if (u.status === 'fulfilled') running.push(u.value);
    for (const u of up) if (u.status === 'rejected') throw u.reason;
    for (const p of payloads)
      for (const protocol of protocols)
        for (const r of running) {
          await calls(r, protocol, p, SIZES[p.size].warmup);
          const perCall = await instructionWindows(
            r.child.pid!,
            dir,
            { windows: WINDOWS, calls: SIZES[p.size].window, label: 'typed-sizes' },
            (n) => calls(r, protocol, p, n),
          );
          const key = `${r.typed ? 'typed' : 'untyped'}|${protocol}|${p.size}`;
          log(`callgrind ${key}: ${perCall.map((x) => Math.round(x)).join(', ')}`);
          out.set(key, Math.min(...perCall));
        }
  } finally {
    await Promise.all(running.map(stop));
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** `<protocol>|<size>` → the rounds' typed ÷ untyped server CPU per call. */
async function measureCpu(): Promise<Map<string, number[]>> {
  pinThisProcess('0');
  const out = new Map<string, number[]>();
  const running: Running[] = [];
  try {
    running.push(await start(false));
    running.push(await start(true));
    for (const p of payloads)
      for (const protocol of protocols) {
        const n = Math.round(SIZES[p.size].cpuCalls * CPU_SCALE);
        for (const r of running) await calls(r, protocol, p, n);
        const ratios: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const per = new Map<boolean, number>();
          for (const r of round % 2 ? [...running].reverse() : running) {
            const before = cpuNs(r.child.pid!);
            await calls(r, protocol, p, n);
            per.set(r.typed, (cpuNs(r.child.pid!) - before) / n);
          }
          ratios.push(per.get(true)! / per.get(false)!);
        }
        log(
          `cpu ${protocol}|${p.size}: typed ÷ untyped ${ratios.map((x) => x.toFixed(3)).join(', ')}`,
        );
        out.set(`${protocol}|${p.size}`, ratios);
      }
  } finally {
    await Promise.all(running.map(stop));
    pinThisProcess('0-1');
  }
  return out;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const instr = parts.includes('instr') ? await measureInstructions() : new Map<string, number>();
  const cpu = parts.includes('cpu') ? await measureCpu() : new Map<string, number[]>();
  console.log(
    `\n> typed ÷ untyped, Sizes.Echo, no middleware; instructions per call: callgrind, interpreter only, the least of ${WINDOWS} windows; ` +
      `CPU time: JIT on, pinned, median of ${ROUNDS} alternating rounds; Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}, ${Math.round((Date.now() - t0) / 1000)} s\n`,
  );
  console.log(
    '| path | message | bytes (JSON) | untyped instr/call | typed instr/call | typed ÷ untyped, instructions | typed ÷ untyped, CPU time (rounds) |',
  );
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const p of payloads)
    for (const protocol of protocols) {
      const u = instr.get(`untyped|${protocol}|${p.size}`);
      const t = instr.get(`typed|${protocol}|${p.size}`);
      const c = cpu.get(`${protocol}|${p.size}`);
      console.log(
        `| ${protocol === 'grpc' ? 'gRPC unary' : 'gateway POST /v1/echo'} | ${p.size} | ${protocol === 'grpc' ? p.bytes.length : p.json.length} | ` +
          `${u ? Math.round(u).toLocaleString('en-US') : '–'} | ${t ? Math.round(t).toLocaleString('en-US') : '–'} | ` +
          `${u && t ? `${(t / u).toFixed(3)}×` : '–'} | ${c ? `${median(c).toFixed(2)}× (${c.map((x) => x.toFixed(2)).join(', ')})` : '–'} |`,
      );
    }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof MeasureError ? err.message : err);
      process.exit(2);
    },
  );
