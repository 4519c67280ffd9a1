/**
 * What `middleware.validate` (protovalidate) costs per call on a request with ten constrained
 * fields (entry-grpc's shelf.v1.CreateShelfRequest: min/max length, email, uuid, an int32 range,
 * repeated items, a pattern, gt, required, uri, an int64 range), valid so that every rule runs:
 * servers/validated.ts with the middleware off, on with the method on its `ignore` list, and on.
 * Each server is first checked with real clients (a typed gRPC client and fetch: the valid
 * request answered, an invalid one refused only where the middleware checks), then loaded with
 * h2load as the grpc bench does (load.ts: gRPC unary CreateShelf, and POST /v1/shelves with the
 * JSON body on the gateway), every server up at once, pinned, the order rotated each round; per
 * server the medians over the rounds of req/s and server CPU µs per request, and the median
 * per-round difference from "off".
 *
 * `node --import tsx grpc/validate.ts` from bench/ (BENCH_SECONDS, 2; BENCH_ROUNDS, 5).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { Code, RpcError, typedClient } from '@svcboot/entry-grpc';
import {
  CreateShelfRequestSchema,
  Shelves,
  VALID_SHELF,
} from '../../libs/grpc-server/src/test-support/typed/shelf-validated.js';
import { ensureBuilt } from '../lib/built.js';
import { fmt, median } from '../lib/stats.js';
import { hasTaskset, type LoadShape, type LoadTarget } from './load.js';
import { loadRounds, startServer, stopServers, type ServerProcess } from './server-process.js';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 2);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const shape: LoadShape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 32 };
const pinned = hasTaskset && os.cpus().length > 1;
const MODES = ['off', 'ignored', 'on'] as const;
type Mode = (typeof MODES)[number];
const LABEL: Record<Mode, string> = {
  off: 'off',
  ignored: 'on, call on `ignore`',
  on: 'on, checked',
};

const TARGET: LoadTarget = {
  grpcPath: '/shelf.v1.Shelves/CreateShelf',
  grpcRequest: toBinary(CreateShelfRequestSchema, create(CreateShelfRequestSchema, VALID_SHELF)),
  httpPath: '/v1/shelves',
  httpBody: JSON.stringify({ ...VALID_SHELF, floor: String(VALID_SHELF.floor) }),
};

interface Server extends ServerProcess {
  mode: Mode;
}

async function start(mode: Mode): Promise<Server> {
  const server = await startServer(
    `validate ${mode}`,
    'validated',
    { SVC_VALIDATE: mode },
    pinned ? '1' : undefined,
  );
  return { mode, ...server };
}

/**
 * The server answers the valid request on both paths, and refuses an invalid one (an empty
 * name) only when it checks: h2load counts a gRPC status in the trailers as a success, so what
 * is loaded is verified here first.
 */
async function verify(s: Server): Promise<void> {
  const client = typedClient(Shelves as never, `127.0.0.1:${s.port}`) as unknown as {
    createShelf(r: unknown): Promise<{ name: string }>;
    $close(): void;
  };
  try {
    const ok = await client.createShelf(VALID_SHELF);
    if (ok.name !== VALID_SHELF.name) throw new Error(`${s.mode}: answered ${JSON.stringify(ok)}`);
    const bad = await client.createShelf({ ...VALID_SHELF, name: '' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const refused = bad instanceof RpcError && bad.code === Code.INVALID_ARGUMENT;
    if (refused !== (s.mode === 'on'))
      throw new Error(`${s.mode}: the invalid request was ${refused ? '' : 'not '}refused`);
  } finally {
    client.$close();
  }
  const res = await fetch(`http://127.0.0.1:${s.port}${TARGET.httpPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: TARGET.httpBody!,
  });
  if (res.status !== 200) throw new Error(`${s.mode}: the gateway answered ${res.status}`);
  await res.arrayBuffer();
}

ensureBuilt();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-validate-'));
const servers: Server[] = [];
try {
  for (const m of MODES) servers.push(await start(m));
  for (const s of servers) await verify(s);
  const { results, loadAtStart: load0 } = await loadRounds(servers, (s) => s.mode, {
    shape,
    dir,
    seconds,
    rounds,
    noLatency: true,
    target: TARGET,
    noErrors: true,
    ...(pinned ? { cpu: '0' } : {}),
  });
  const load1 = os.loadavg()[0]!;
  console.log(
    `> h2load, ${rounds} rounds × ${seconds} s per server and path, a valid CreateShelfRequest (10 rules; ${TARGET.grpcRequest.byteLength} bytes, ${TARGET.httpBody!.length} as JSON); ${pinned ? 'servers pinned to CPU 1, h2load to CPU 0' : 'unpinned'}; load average ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end; Node ${process.version}`,
  );
  console.log('');
  console.log('| path | middleware.validate | req/s | server CPU µs/req | over "off", µs/req |');
  console.log('|---|---|---:|---:|---:|');
  for (const p of ['grpc', 'http'] as const) {
    const off = results.get(`${p}|off`)!;
    for (const m of MODES) {
      const rs = results.get(`${p}|${m}`)!;
      const over =
        m === 'off'
          ? ''
          : fmt(median(rs.map((x, i) => x.serverCpuUsPerReq - off[i]!.serverCpuUsPerReq)), 1);
      console.log(
        `| ${p === 'grpc' ? 'gRPC unary CreateShelf' : 'gateway POST /v1/shelves'} | ${LABEL[m]} | ${fmt(median(rs.map((x) => x.reqPerSec)))} | ${fmt(median(rs.map((x) => x.serverCpuUsPerReq)), 1)} | ${over} |`,
      );
    }
  }
} finally {
  await stopServers(servers);
  await rm(dir, { recursive: true, force: true });
}
