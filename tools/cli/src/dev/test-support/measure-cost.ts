import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  isListening,
  plainEnv,
  SOURCE_NODE_ARGS,
  startOnFreePorts,
  waitFor,
} from '@svcboot/testkit';

/*
 * What svc dev and its dashboard cost, on demo-chain: the svc dev process's resident memory idle
 * and after the calls, and the CPU it spends per call record (reading the JSON copies, keeping
 * them, sending each to one open /api/records stream, as an open dashboard page does) and per
 * call (its 5 records and the 5 spans the tracers send it).
 *
 *   cd tools/cli && node --conditions=svcboot-source --import tsx src/dev/test-support/measure-cost.ts [calls]
 *
 * Linux only (/proc). docs/dev.md, "Its cost", has the figures of one run.
 */

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const chainDir = path.resolve(cliDir, '../../apps/demo-chain');
const calls = Number(process.argv[2] ?? 300);
const TICKS = 100; // getconf CLK_TCK on Linux

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}
/** utime + stime of the process, ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, utime 14, stime 15 (1-based) → indexes 11 and 12 here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

const { child: dev, ports } = await startOnFreePorts(
  3,
  ([front, users, billing]) =>
    Child.start(
      process.execPath,
      [...SOURCE_NODE_ARGS, path.join(cliDir, 'src/bin.ts'), 'dev', '--dashboard-port', '0'],
      {
        cwd: chainDir,
        env: plainEnv({
          PORT: String(front),
          USERS_PORT: String(users),
          BILLING_PORT: String(billing),
        }),
      },
    ),
  {
    timeoutMs: 120_000,
    ready: async (child, ps) => {
      if (!child.stderr.includes('[svc dev] dashboard: ')) return false;
      for (const p of ps) if (!(await isListening(p))) return false;
      return true;
    },
  },
);
const pid = dev.process.pid as number;
try {
  const dashboard = /\[svc dev\] dashboard: (\S+)/.exec(dev.stderr)?.[1] ?? '';
  // One open stream, as one dashboard page: every record is sent to it.
  let seen = 0;
  const abort = new AbortController();
  const res = await fetch(`${dashboard}api/records`, { signal: abort.signal });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        seen += (decoder.decode(chunk, { stream: true }).match(/^event: record$/gm) ?? []).length;
    } catch {
      // aborted at the end
    }
  })();
  // A first call warms every path (grpc-js channels, JIT); then the quiet state is measured.
  await fetch(`http://127.0.0.1:${ports[0]}/v1/accounts/0`).then((r) => r.text());
  const settled = await waitFor('the first call’s records', () => (seen >= 5 ? seen : undefined), {
    timeoutMs: 30_000,
  });
  const idleRss = rssMb(pid);
  const cpuBefore = cpuMs(pid);
  let lastTrace = '';
  for (let i = 1; i <= calls; i++) {
    const r = await fetch(`http://127.0.0.1:${ports[0]}/v1/accounts/${i}`);
    if (r.status !== 200) throw new Error(`GET /v1/accounts/${i}: ${r.status}`);
    lastTrace = r.headers.get('x-trace-id') ?? '';
    await r.text();
  }
  // Each GetAccount writes 5 records: front's call, its two client calls, users', billing's.
  const expected = settled + calls * 5;
  await waitFor('every record on the stream', () => seen >= expected, { timeoutMs: 120_000 });
  // And its 5 spans come to svc dev in the tracers' batches: the last call's, after the others'.
  await waitFor(
    "the last call's spans",
    async () => {
      const t = (await (await fetch(`${dashboard}api/traces/${lastTrace}`)).json()) as {
        spans?: unknown[];
      };
      return (t.spans?.length ?? 0) >= 5;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const cpu = cpuMs(pid) - cpuBefore;
  const records = seen - settled;
  const rss = rssMb(pid);
  abort.abort();
  const f = (n: number, d = 1): string => n.toFixed(d);
  process.stdout.write(
    `${calls} calls, ${records} records sent to one /api/records stream, their spans received\n` +
      `svc dev resident memory: ${f(idleRss)} MB after the first call, ${f(rss)} MB after the calls\n` +
      `svc dev CPU: ${f(cpu, 0)} ms in all, ${f(cpu / records, 3)} ms per record, ${f(cpu / calls, 3)} ms per call\n` +
      `(${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})\n`,
  );
} finally {
  dev.process.kill('SIGINT');
  await dev.waitForExit(30_000).catch(() => dev.kill());
}
