/**
 * Server CPU per request of one unary RPC (connecttest.v1.Greeter/Say, the Connect tests' service:
 * a response header and a trailer) over each protocol of a svcboot grpc entry (gRPC, the REST
 * gateway, Connect JSON and proto over HTTP/1.1 and HTTP/2) and over @connectrpc/connect-node
 * serving the same method alone (connectNodeAdapter on node:http and node:http2). Each server is a
 * child process that reports its own `process.cpuUsage()`; the client runs `BENCH_CALLS` calls
 * (default 4000) with `BENCH_CONCURRENCY` in flight (16) after a warm-up, `BENCH_ROUNDS` times (3),
 * and prints the median µs of server CPU (user + system) per call. `BENCH_ONLY`: a regular
 * expression the rows (`<server> <path>`) must match; `BENCH_CPU_PROF`: a folder for the servers'
 * V8 CPU profiles (`--cpu-prof`). Not part of `npm run bench`.
 *
 * `node --import tsx grpc/connect.ts` from bench/ (after `npx nx run entry-grpc:build`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const protoDir = path.resolve(here, '../../libs/grpc-server/src/connect/test-support/proto');
const greeterProto = path.join(protoDir, 'connecttest/v1/greeter.proto');
const CALLS = Number(process.env['BENCH_CALLS'] ?? 4000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const SAY = '/connecttest.v1.Greeter/Say';

// ------------------------------------------------------------------------------------ servers

async function serveSvcboot(middleware: boolean): Promise<number> {
  const { boot } = await import('@svcboot/entry-core');
  const { grpcEntry } = await import('@svcboot/entry-grpc');
  const { greeterConfig, greeterDefinition, greeterImplementation } = await import(
    '../../libs/grpc-browser/src/connect/test-support/greeter.js'
  );
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-connect-'));
  const app = await boot({
    configText: greeterConfig(
      'bench',
      path.join(dir, 'events.log'),
      middleware
        ? '    middleware: { logging: { enabled: true }, prom: { enabled: true }, meta: { enabled: true } }\n'
        : '',
    ),
    cwd: dir,
    argv: [],
    env: {},
  });
  const entry = grpcEntry(app, 'api');
  entry.addService(greeterDefinition(), greeterImplementation);
  await app.bootstrap();
  return entry.port;
}

/** connect-node alone: the same answer (header, trailer) from a connect-es handler. */
async function serveConnectNode(h2: boolean): Promise<number> {
  // connect-node is a dev dependency of grpc-server (not hoisted): loaded from there.
  const require = createRequire(path.resolve(here, '../../libs/grpc-server/package.json'));
  const { createFileRegistry, fromBinary } =
    require('@bufbuild/protobuf') as typeof import('@bufbuild/protobuf');
  const { FileDescriptorSetSchema } =
    require('@bufbuild/protobuf/wkt') as typeof import('@bufbuild/protobuf/wkt');
  const { connectNodeAdapter } = require('@connectrpc/connect-node') as {
    connectNodeAdapter(o: {
      routes(r: { service(s: unknown, impl: unknown): void }): void;
    }): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  };
  const set = fromBinary(FileDescriptorSetSchema, await readFile(process.env['GREETER_SET'] ?? ''));
  const service = createFileRegistry(set).getService('connecttest.v1.Greeter')!;
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(service, {
        say(
          req: { text: string; big: bigint },
          ctx: { responseHeader: Headers; responseTrailer: Headers },
        ) {
          ctx.responseHeader.set('x-greeting', 'hello');
          ctx.responseTrailer.set('x-done', 'yes');
          return { text: `hello ${req.text}`, big: req.big };
        },
      });
    },
  });
  const server = h2
    ? http2.createServer(handler as unknown as Parameters<typeof http2.createServer>[0])
    : http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

// ------------------------------------------------------------------------------------ clients

type Call = () => Promise<void>;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`unexpected answer: ${what}`);
}

const greeterType = protobuf.loadSync(greeterProto);
const SayRequest = greeterType.lookupType('connecttest.v1.SayRequest');
const protoBody = Buffer.from(SayRequest.encode({ text: 'bench' }).finish());
const jsonBody = Buffer.from('{"text":"bench"}');

function http1Caller(port: number, headers: Record<string, string>, body: Buffer): Call {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  return () =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: SAY, agent, headers },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) resolve();
            else reject(new Error(`HTTP ${res.statusCode}`));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

function http2Caller(port: number, headers: Record<string, string>, body: Buffer): Call {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  return () =>
    new Promise((resolve, reject) => {
      const req = session.request({ ':method': 'POST', ':path': SAY, ...headers });
      let status = 0;
      req.on('response', (h) => {
        status = Number(h[':status']);
      });
      req.on('data', () => undefined);
      req.on('end', () => (status === 200 ? resolve() : reject(new Error(`HTTP/2 ${status}`))));
      req.on('error', reject);
      req.end(body);
    });
}

function grpcCaller(port: number): Call {
  const pkg = loadPackageDefinition(
    loadSync(greeterProto, { includeDirs: [protoDir] }),
  ) as unknown as {
    connecttest: {
      v1: { Greeter: new (a: string, c: ReturnType<typeof credentials.createInsecure>) => Client };
    };
  };
  const client = new pkg.connecttest.v1.Greeter(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
  ) as Client &
    Record<string, (req: unknown, cb: (err: unknown, res: { text: string }) => void) => void>;
  return () =>
    new Promise((resolve, reject) =>
      client['Say']!({ text: 'bench' }, (err, res) => {
        if (err) reject(err);
        else {
          check(res.text === 'hello bench', res.text);
          resolve();
        }
      }),
    );
}

const CONNECT_JSON = { 'content-type': 'application/json', 'connect-protocol-version': '1' };
const CONNECT_PROTO = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };

interface Row {
  server: string;
  path: string;
  call: (port: number) => Call;
}

/** Each path a client takes, by name. */
const PATHS: Record<string, (port: number) => Call> = {
  'gRPC (grpc-js client, h2)': (p) => grpcCaller(p),
  'REST gateway JSON (HTTP/1.1)': (p) =>
    http1Caller(p, { 'content-type': 'application/json' }, jsonBody),
  'Connect JSON (HTTP/1.1)': (p) => http1Caller(p, CONNECT_JSON, jsonBody),
  'Connect proto (HTTP/1.1)': (p) => http1Caller(p, CONNECT_PROTO, protoBody),
  'Connect proto (h2c)': (p) => http2Caller(p, CONNECT_PROTO, protoBody),
};

/** The paths each server answers. */
const SERVED: Record<string, string[]> = {
  svcboot: Object.keys(PATHS),
  'connect-node-h1': ['Connect JSON (HTTP/1.1)', 'Connect proto (HTTP/1.1)'],
  'connect-node-h2': ['Connect proto (h2c)'],
};

const ROWS: Row[] = Object.entries(SERVED).flatMap(([server, paths]) =>
  paths.map((path) => ({ server, path, call: PATHS[path]! })),
);

interface Child {
  child: ChildProcess;
  port: number;
  cpu(): Promise<number>;
}

async function startChild(kind: string, env: Record<string, string>): Promise<Child> {
  const prof = process.env['BENCH_CPU_PROF'];
  const flags = prof ? ['--cpu-prof', '--cpu-prof-dir', path.join(prof, kind)] : [];
  const child = spawn(
    process.execPath,
    [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), 'serve', kind],
    {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, ...env },
    },
  );
  const [msg] = (await once(child, 'message')) as [{ port: number }];
  return {
    child,
    port: msg.port,
    async cpu() {
      child.send('cpu');
      const [u] = (await once(child, 'message')) as [{ user: number; system: number }];
      return u.user + u.system;
    },
  };
}

async function drive(call: Call, n: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-connect-set-'));
  const { bufBinary } = await import('@svcboot/testkit');
  const setFile = path.join(dir, 'greeter.binpb');
  await promisify(execFile)(await bufBinary(), ['build', protoDir, '-o', setFile]);
  const children = new Map<string, Child>();
  try {
    for (const kind of ['svcboot', 'svcboot-mw', 'connect-node-h1', 'connect-node-h2'])
      children.set(kind, await startChild(kind, { GREETER_SET: setFile }));
    const only = new RegExp(process.env['BENCH_ONLY'] ?? '');
    const rows = [
      ...ROWS,
      ...ROWS.filter((r) => r.server === 'svcboot').map((r) => ({ ...r, server: 'svcboot-mw' })),
    ].filter((r) => only.test(`${r.server} ${r.path}`));
    const results = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const row of rows) {
        const c = children.get(row.server)!;
        const call = row.call(c.port);
        await drive(call, Math.min(1000, CALLS));
        const before = await c.cpu();
        await drive(call, CALLS);
        const after = await c.cpu();
        const key = `${row.server}|${row.path}`;
        results.set(key, [...(results.get(key) ?? []), (after - before) / CALLS]);
      }
    }
    const median = (xs: number[]): number =>
      [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `> ${CALLS} calls × ${ROUNDS} rounds, ${CONCURRENCY} in flight, Node ${process.version}, ${os.cpus().length} vCPUs, load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    console.log('| server | path | server CPU µs/call (median) |');
    console.log('|---|---|---:|');
    const names: Record<string, string> = {
      svcboot: 'svcboot grpc entry, no middleware',
      'svcboot-mw': 'svcboot grpc entry, logging+prom+meta',
      'connect-node-h1': '@connectrpc/connect-node alone (node:http)',
      'connect-node-h2': '@connectrpc/connect-node alone (node:http2)',
    };
    for (const [key, values] of results) {
      const [server, p] = key.split('|');
      console.log(`| ${names[server!]} | ${p} | ${median(values).toFixed(0)} |`);
    }
  } finally {
    for (const c of children.values()) c.child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') {
  const kind = process.argv[3]!;
  const port =
    kind === 'connect-node-h1'
      ? await serveConnectNode(false)
      : kind === 'connect-node-h2'
        ? await serveConnectNode(true)
        : await serveSvcboot(kind === 'svcboot-mw');
  process.on('message', () => process.send?.(process.cpuUsage()));
  // A clean exit, so that `--cpu-prof` (BENCH_CPU_PROF) writes its profile.
  process.on('SIGTERM', () => process.exit(0));
  process.send?.({ port });
} else await main();
