/**
 * Issue 18's probes from outside, against apps/demo-grpc as shipped (its boot.yaml, the
 * defaults): not a test, a measurement. Starts the demo as a child process on a free port, then
 *
 *  1. `preface`: N HTTP/2 connections that send the preface and SETTINGS, then nothing: how many
 *     are open after 5 s and after http2FirstStreamTimeoutMs (30 s) + 5 s;
 *  2. `flood`: M such connections opened as fast as two worker processes can (each process has
 *     its own open-file limit), held 15 s: /livez polled every 250 ms (answered, slowest), the
 *     server's RSS during and 5 s after they closed, svc_connections_refused_total;
 *  3. `query`: GET /v1/hello with 3,000 distinct query parameters vs none (median of 20);
 *  4. `deep`: a 4 MB JSON body nested 2,000,000 levels deep, POSTed by 8 clients for 10 s to a
 *     gateway route with `body: "*"` (demo-grpc has none: the entry's test Library service,
 *     src/test-support, is started as a second child for this): status, requests done, /livez
 *     latency meanwhile, RSS before and peak.
 *
 * Run from the repository root (takes about 90 s; opens up to 21,000 local connections):
 *   node --conditions=svcboot-source --import tsx libs/grpc-server/bench/flood-probes.ts [probes…]
 * Options by environment: PREFACE_CONNECTIONS (2000), FLOOD_CONNECTIONS (21000), FLOOD_ROUNDS (1;
 * 2 tells memory kept for reuse from memory lost: a leak would grow in the second round).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Opens `n` preface-only connections; resolves the sockets still open when asked. */
async function openPrefaceOnly(port: number, n: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  const batch = 200;
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from(
        { length: Math.min(batch, n - i) },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => {
              s.write(PREFACE);
              s.write(SETTINGS);
              resolve();
            });
            s.on('data', () => undefined);
            s.on('error', () => resolve());
            s.on('close', () => resolve());
            sockets.push(s);
          }),
      ),
    );
  }
  return sockets;
}

const openCount = (sockets: net.Socket[]): number =>
  sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;

// A flood worker: opens its share, reports how many are open, closes all on 'close'.
if (process.argv[2] === '--library') {
  // The test Library service (a POST route with a JSON body), records to a temp file.
  const { startLibrary } = await import('../src/test-support/harness.js');
  const h = await startLibrary();
  process.send?.({ port: h.port });
  process.on('message', () => void h.stop().then(() => process.exit(0)));
} else if (process.argv[2] === '--worker') {
  const port = Number(process.argv[3]);
  const n = Number(process.argv[4]);
  const sockets = await openPrefaceOnly(port, n);
  process.send?.({ opened: openCount(sockets) });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'count') process.send?.({ open: openCount(sockets) });
    if (m.cmd === 'close') {
      for (const s of sockets) s.destroy();
      process.exit(0);
    }
  });
} else {
  await main();
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : -1;
}

function request(
  port: number,
  method: string,
  p: string,
  body?: Buffer,
  timeoutMs = 5000,
): Promise<{ status: number; ms: number }> {
  const start = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: p,
        agent: false,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - start) / 1e6,
          }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', () =>
      resolve({ status: 0, ms: Number(process.hrtime.bigint() - start) / 1e6 }),
    );
    req.end(body);
  });
}

/** Polls /livez every 250 ms until stopped: answered / asked, slowest, longest gap without an answer. */
function pollLivez(port: number): { stop(): Promise<string> } {
  let running = true;
  let asked = 0;
  let answered = 0;
  let slowest = 0;
  let lastOk = Date.now();
  let longestGap = 0;
  const loop = (async () => {
    while (running) {
      asked++;
      const r = await request(port, 'GET', '/livez', undefined, 2000);
      if (r.status === 200) {
        answered++;
        longestGap = Math.max(longestGap, Date.now() - lastOk);
        lastOk = Date.now();
      }
      slowest = Math.max(slowest, r.ms);
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return `/livez answered ${answered}/${asked}, slowest ${slowest.toFixed(0)} ms, longest gap between answers ${longestGap} ms`;
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function startDemo(): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
    {
      cwd: path.join(root, 'apps/demo-grpc'),
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; i < 300; i++) {
    if ((await request(port, 'GET', '/livez', undefined, 500)).status === 200)
      return { port, child };
    await sleep(100);
  }
  throw new Error('demo-grpc did not start');
}

async function metric(port: number, name: string): Promise<string> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve(
          text
            .split('\n')
            .filter((l) => l.startsWith(name))
            .join('; ') || `${name}: none`,
        ),
      );
    });
  });
}

async function probePreface(port: number, pid: number): Promise<void> {
  const n = Number(process.env['PREFACE_CONNECTIONS'] ?? 2000);
  const sockets = await openPrefaceOnly(port, n);
  console.log(`preface: ${openCount(sockets)}/${n} open after connecting; RSS ${rssMb(pid)} MB`);
  await sleep(5000);
  console.log(`preface: ${openCount(sockets)}/${n} open after 5 s`);
  await sleep(30_000);
  console.log(
    `preface: ${openCount(sockets)}/${n} open after 35 s (http2FirstStreamTimeoutMs 30 s); RSS ${rssMb(pid)} MB`,
  );
  for (const s of sockets) s.destroy();
}

async function probeFlood(port: number, pid: number): Promise<void> {
  const total = Number(process.env['FLOOD_CONNECTIONS'] ?? 21_000);
  const before = rssMb(pid);
  const livez = pollLivez(port);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 500);
  const started = Date.now();
  const workers = [0, 1].map(() =>
    fork(fileURLToPath(import.meta.url), ['--worker', String(port), String(total / 2)], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const opened = await Promise.all(
    workers.map(
      (w) => new Promise<number>((r) => w.once('message', (m: { opened: number }) => r(m.opened))),
    ),
  );
  console.log(
    `flood: ${total} connections attempted in ${Date.now() - started} ms, ${opened.reduce((a, b) => a + b, 0)} open; RSS ${rssMb(pid)} MB`,
  );
  await sleep(15_000);
  const still = await Promise.all(
    workers.map((w) => {
      w.send({ cmd: 'count' });
      return new Promise<number>((r) => w.once('message', (m: { open: number }) => r(m.open)));
    }),
  );
  console.log(`flood: ${still.reduce((a, b) => a + b, 0)} open after 15 s; RSS peak ${peak} MB`);
  console.log(`flood: ${await livez.stop()}`);
  clearInterval(sampler);
  for (const w of workers) w.send({ cmd: 'close' });
  await sleep(5000);
  console.log(
    `flood: RSS before ${before} MB, peak ${peak} MB, 5 s after the flood ${rssMb(pid)} MB`,
  );
  console.log(`flood: ${await metric(port, 'svc_connections_refused_total{')}`);
  await sleep(25_000);
  console.log(`flood: RSS 30 s after the flood ${rssMb(pid)} MB`);
}

async function probeQuery(port: number): Promise<void> {
  // Keys without values keep the URL (about 10 KB) under Node's 16 KB header limit.
  const qs = Array.from({ length: 3000 }, (_, i) => i.toString(36)).join('&');
  const median = async (p: string): Promise<string> => {
    const times: number[] = [];
    let status = 0;
    for (let i = 0; i < 20; i++) {
      const r = await request(port, 'GET', p);
      status = r.status;
      times.push(r.ms);
    }
    times.sort((a, b) => a - b);
    return `status ${status}, median ${times[10]!.toFixed(1)} ms`;
  };
  console.log(`query: plain /v1/hello: ${await median('/v1/hello')}`);
  console.log(`query: 3,000 parameters: ${await median(`/v1/hello?${qs}`)}`);
}

async function probeDeep(): Promise<void> {
  const lib = fork(fileURLToPath(import.meta.url), ['--library'], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((r) =>
    lib.once('message', (m: { port: number }) => r(m.port)),
  );
  const pid = lib.pid!;
  try {
    await deepAgainst(port, pid);
  } finally {
    lib.send('stop');
  }
}

async function deepAgainst(port: number, pid: number): Promise<void> {
  const depth = 2_000_000;
  const target = '/v1/shelves/s1/books';
  const body = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
  const ok = await request(port, 'POST', target, Buffer.from('{"title":"t"}'));
  console.log(`deep: a plain request to ${target}: status ${ok.status} in ${ok.ms.toFixed(1)} ms`);
  const one = await request(port, 'POST', target, body, 30_000);
  console.log(
    `deep: one ${body.length} B request: status ${one.status} in ${one.ms.toFixed(0)} ms`,
  );
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 250);
  const livez = pollLivez(port);
  const until = Date.now() + 10_000;
  let done = 0;
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < until) {
        const r = await request(port, 'POST', target, body, 30_000);
        done++;
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  clearInterval(sampler);
  console.log(
    `deep: 8 clients x 10 s: ${done} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${await livez.stop()}; RSS ${before} MB before, peak ${peak} MB`,
  );
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const all = wanted.length === 0;
  const { port, child } = await startDemo();
  const pid = child.pid!;
  console.log(`demo-grpc on ${port}, pid ${pid}, RSS ${rssMb(pid)} MB`);
  try {
    if (all || wanted.includes('preface')) await probePreface(port, pid);
    if (all || wanted.includes('flood'))
      for (let i = 0; i < Number(process.env['FLOOD_ROUNDS'] ?? 1); i++)
        await probeFlood(port, pid);
    if (all || wanted.includes('query')) await probeQuery(port);
    if (all || wanted.includes('deep')) await probeDeep();
  } finally {
    child.kill('SIGINT');
  }
}
