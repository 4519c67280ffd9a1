/**
 * What survives a scavenge per call (issue #41): each server started with `node --trace-gc-nvp`,
 * 20,000 unary Greeter.Hello calls to warm it up, then N (default 40,000) more, 8 connections × 8
 * streams, not pinned; from the scavenges of the measured part it prints, per call, the bytes
 * promoted to old space, the bytes that survived in new space, the bytes allocated, the
 * scavenges per 10,000 calls and the mark-compacts. Bare grpc-js, then svcboot with no middleware
 * and with logging + prom + meta, on each of its servers (ONLY=<text> keeps the rows whose label
 * has it). `node --import tsx grpc/gc-probe.ts` from bench/ (the libs from their dist/). The
 * figures move with timing (what is in flight when a scavenge comes): compare rows of one run.
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env['N'] ?? 40000);
const only = process.env['ONLY'];
const cases: Array<[string, string, Record<string, string>]> = [
  ['grpc-js', 'grpc-js', {}],
  ['svcboot none (server: grpc-js)', 'svcboot', { SVC_MIDDLEWARE: 'none', SVC_SERVER: 'grpc-js' }],
  [
    'svcboot all three (server: grpc-js)',
    'svcboot',
    { SVC_MIDDLEWARE: 'logging,prom,meta', SVC_SERVER: 'grpc-js' },
  ],
  ['svcboot none (server: node)', 'svcboot', { SVC_MIDDLEWARE: 'none', SVC_SERVER: 'node' }],
  [
    'svcboot all three (server: node)',
    'svcboot',
    { SVC_MIDDLEWARE: 'logging,prom,meta', SVC_SERVER: 'node' },
  ],
];

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
const field = (line: string, name: string): number =>
  Number(new RegExp(` ${name}=(\\d+)`).exec(line)?.[1] ?? 0);

const dir = await mkdtemp(path.join(os.tmpdir(), 'gc-probe-'));
try {
  for (const [label, module, env] of cases) {
    if (only && !label.includes(only)) continue;
    const port = await freePort();
    const log = path.join(dir, `${port}.log`);
    const child = spawn(
      process.execPath,
      ['--trace-gc-nvp', '--import', 'tsx', path.join(here, 'servers', `${module}.ts`)],
      {
        env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
        stdio: ['ignore', openSync(log, 'w'), 'inherit'],
      },
    );
    try {
      while (!(await accepts(port))) await new Promise((r) => setTimeout(r, 100));
      const shape = { grpcConnections: 8, grpcStreams: 8, httpConnections: 1 };
      const run = (requests: number) =>
        load({ protocol: 'grpc', port, pid: child.pid!, shape, requests, dir, noLatency: true });
      await run(20000);
      const from = readFileSync(log, 'utf8').length;
      await run(N);
      await new Promise((r) => setTimeout(r, 200));
      let scavenges = 0;
      let marks = 0;
      let promoted = 0;
      let survived = 0;
      let allocated = 0;
      for (const line of readFileSync(log, 'utf8').slice(from).split('\n')) {
        const gc = / gc=(\w+)/.exec(line)?.[1];
        if (gc === undefined) continue;
        allocated += field(line, 'allocated');
        if (gc !== 's') {
          marks++;
          continue;
        }
        scavenges++;
        promoted += field(line, 'promoted');
        survived += field(line, 'new_space_survived');
      }
      console.log(
        `${label}: promoted ${(promoted / N).toFixed(0)} B/call, survived in new space ${(survived / N).toFixed(0)} B/call, allocated ${(allocated / N).toFixed(0)} B/call, ${((scavenges * 10000) / N).toFixed(1)} scavenges per 10k calls, ${marks} mark-compacts`,
      );
    } finally {
      child.kill('SIGKILL');
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
