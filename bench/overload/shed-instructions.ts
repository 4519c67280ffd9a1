/**
 * Instructions per call (callgrind) of a shed call against its transport's floor, the steady
 * figure behind BENCH_ONLY=cost's CPU table: the node:http floor (floor.ts) against an httpserver
 * entry shedding every call (server.ts, SHED_ALL=1, one `GET /v1/hold` in flight), and the
 * node:http2 floor (floor-h2.ts) against a grpc entry shedding every call (grpc-server.ts,
 * SHED_ALL=1, one call with `x-hold: 1` in flight). Each server runs under callgrind
 * (tools/scripts/ratio/measure.ts: V8's interpreter only, so the figures are of interpreted code);
 * after WARMUP calls, WINDOWS windows of CALLS calls one after the other on one connection; the
 * least window per call is printed.
 *
 * `node --import tsx overload/shed-instructions.ts [http-floor,http-shed,h2-floor,grpc-shed]`
 * from bench/ (libs from dist/).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, credentials, Metadata } from '@grpc/grpc-js';
import { instructionWindows, startServer, stopServer } from '../../tools/scripts/ratio/measure.js';
import { rawUnaryClient } from '../lib/raw-unary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WARMUP = Number(process.env['WARMUP'] ?? 500);
const WINDOWS = Number(process.env['WINDOWS'] ?? 3);
const CALLS = Number(process.env['CALLS'] ?? 200);

interface Caller {
  call(): Promise<number | string>;
  close(): void;
}

function httpCaller(port: number, p: string): Caller {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    call: () =>
      new Promise((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: p, agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}

const Greeter = rawUnaryClient('Greeter', 'Hello', '/api.v1.Greeter/Hello');

function grpcCaller(port: number, hold: boolean): Caller & { held?: Client } {
  const client = new Greeter(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
  ) as unknown as Client & {
    Hello(req: Buffer, md: Metadata, cb: (err: { code: number } | null) => void): void;
  };
  if (hold) {
    const md = new Metadata();
    md.set('x-hold', '1');
    client.Hello(Buffer.alloc(0), md, () => undefined);
  }
  return {
    call: () =>
      new Promise((resolve) =>
        client.Hello(Buffer.alloc(0), new Metadata(), (err) => resolve(err ? err.code : 0)),
      ),
    close: () => client.close(),
  };
}

interface Target {
  key: string;
  file: string;
  env: Record<string, string>;
  caller(port: number): Promise<Caller>;
}

const targets: Target[] = [
  {
    key: 'http-floor',
    file: 'floor.ts',
    env: {},
    caller: async (port) => httpCaller(port, '/'),
  },
  {
    key: 'http-shed',
    file: 'server.ts',
    env: { SHED_ALL: '1' },
    caller: async (port) => {
      const held = new http.Agent({ keepAlive: false });
      http
        .get({ host: '127.0.0.1', port, path: '/v1/hold', agent: held })
        .on('error', () => undefined);
      await new Promise((r) => setTimeout(r, 2000));
      return httpCaller(port, '/v1/render');
    },
  },
  {
    key: 'h2-floor',
    file: 'floor-h2.ts',
    env: {},
    caller: async (port) => grpcCaller(port, false),
  },
  {
    key: 'grpc-shed',
    file: 'grpc-server.ts',
    env: { SHED_ALL: '1' },
    caller: async (port) => {
      const c = grpcCaller(port, true);
      await new Promise((r) => setTimeout(r, 2000));
      return c;
    },
  },
];

const wanted = (process.argv[2] ?? targets.map((t) => t.key).join(',')).split(',');
const dir = mkdtempSync(path.join(os.tmpdir(), 'shed-instructions-'));
try {
  for (const t of targets.filter((t) => wanted.includes(t.key))) {
    const server = await startServer({
      file: path.join(here, t.file),
      name: t.key,
      what: `server ${t.key} (bench/overload/${t.file})`,
      label: 'shed-instructions',
      cwd: path.join(here, '..'),
      env: t.env,
      callgrindDir: dir,
    });
    try {
      const c = await t.caller(server.port);
      const statuses = new Map<number | string, number>();
      for (let i = 0; i < WARMUP; i++) await c.call();
      const perCall = await instructionWindows(
        server.child.pid!,
        dir,
        { windows: WINDOWS, calls: CALLS, label: 'shed-instructions' },
        async (n) => {
          for (let i = 0; i < n; i++) {
            const s = await c.call();
            statuses.set(s, (statuses.get(s) ?? 0) + 1);
          }
        },
      );
      c.close();
      console.log(
        `${t.key}: ${Math.round(Math.min(...perCall))} instructions/call (windows: ${perCall.map((x) => Math.round(x)).join(', ')}; statuses ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')})`,
      );
    } finally {
      await stopServer(server.child);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
