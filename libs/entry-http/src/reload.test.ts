import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  consoleRecordTexts,
  freePort,
  plainEnv,
  startOnFreePort,
  waitFor,
} from '@svcboot/testkit';
import { parseConsoleRecord, SEPARATOR } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';

// A real process (test-support/reload-app.ts) reading a boot.yaml the test rewrites, then SIGHUP:
// the new behaviour is checked with real HTTP calls, the record and the metric.

const here = path.dirname(fileURLToPath(import.meta.url));
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Settings {
  port: number;
  level?: string;
  origins?: readonly string[];
  keys?: readonly string[];
  reqPerSec?: number;
  burst?: number;
  logging?: boolean;
  workers?: number;
}

function bootYaml(s: Settings): string {
  return `app:
  name: reload-fixture
  workers: ${s.workers ?? 1}
logger:
  - name: log
    level: ${s.level ?? 'info'}
httpserver:
  - name: web
    port: ${s.port}
    host: 127.0.0.1
    loggerEntry: log
    prom: { enabled: true }
    middleware:
      logging: { enabled: ${s.logging ?? false} }
      cors: { enabled: true, allowOrigins: [${(s.origins ?? ['https://a.example']).join(', ')}] }
      auth:
        enabled: true
        ignore: [/v1/release, /metrics]
        apiKey: [${(s.keys ?? ['key-one', 'key-two']).join(', ')}]
      rateLimit:
        enabled: true
        reqPerSec: ${s.reqPerSec ?? 1000}
        burst: ${s.burst ?? 1000}
        ignore: [/v1/release, /v1/slow, /metrics]
`;
}

interface Started {
  child: Child;
  file: string;
  write(s: Partial<Settings>): void;
  /** Writes the file, sends SIGHUP and waits for the `nth` line matching `done`. */
  reload(s: Partial<Settings> | string, done: RegExp, nth: number): Promise<void>;
}

async function start(initial: Omit<Settings, 'port'> = {}): Promise<Started & { port: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-reload-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'boot.yaml');
  let port = 0;
  const write = (s: Partial<Settings> | string): void =>
    writeFileSync(file, typeof s === 'string' ? s : bootYaml({ ...initial, ...s, port }));
  const { child } = await startOnFreePort(
    (free) => {
      port = free;
      write({});
      const child = Child.start(
        process.execPath,
        [
          '--conditions=svcboot-source',
          '--import',
          'tsx',
          path.join(here, 'test-support/reload-app.ts'),
        ],
        { cwd: path.join(here, '..'), env: plainEnv({ CONFIG: file }) },
      );
      cleanups.push(() => child.kill());
      return child;
    },
    {
      what: initial.workers ? 'every worker to be ready' : 'the app to be ready',
      ready: async (child) =>
        (!initial.workers || child.stdout.includes(`All ${initial.workers} workers are ready`)) &&
        (await get(port, '/readyz').catch(() => undefined))?.status === 200,
      timeoutMs: 60_000,
    },
  );
  return {
    child,
    file,
    port,
    write,
    async reload(s, done, nth) {
      write(s);
      child.process.kill('SIGHUP');
      await waitFor(
        `reload ${nth} (${done})`,
        () => (child.stdout.match(new RegExp(done.source, 'gm'))?.length ?? 0) >= nth,
        {
          timeoutMs: 30_000,
          intervalMs: 20,
        },
      );
    },
  };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (with workers, cluster hands connections out in turn). */
function get(port: number, p: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

function records(child: Child, operation: string): Map<string, string>[] {
  return consoleRecordTexts(child.stdout, SEPARATOR)
    .map((t) => new Map(parseConsoleRecord(t)))
    .filter((r) => r.get('operation') === operation);
}

function reloadsMetric(text: string, result: string): number {
  const m = new RegExp(`^svc_config_reloads_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

const APPLIED = /Reload of .* applied: /;
const REFUSED = /reload refused: /;

describe('configuration reload on SIGHUP (httpserver)', () => {
  it('applies a new log level, CORS origin, rate limit and API key list, writes a Reload record and counts it', async () => {
    const app = await start();
    const key = { 'X-API-Key': 'key-two' };
    const origin = { ...key, Origin: 'https://b.example' };

    // Before: info level, b.example not allowed, key-two accepted, a generous rate limit.
    let r = await get(app.port, '/v1/hello', origin);
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect(app.child.stdout).not.toContain('debug line from /v1/hello');
    for (let i = 0; i < 3; i++) expect((await get(app.port, '/v1/hello', key)).status).toBe(200);
    expect((await get(app.port, '/v1/hello', { 'X-API-Key': 'key-three' })).status).toBe(401);

    await app.reload(
      {
        level: 'debug',
        origins: ['https://a.example', 'https://b.example'],
        keys: ['key-one', 'key-three'],
        reqPerSec: 0.001,
        burst: 2,
      },
      APPLIED,
      1,
    );
    expect(app.child.stdout).toMatch(
      /Reload of .*boot\.yaml applied: httpserver\[web\]\.middleware\.auth, httpserver\[web\]\.middleware\.cors, httpserver\[web\]\.middleware\.rateLimit, logger\[log\]\.level/,
    );

    // The new API keys: key-two is refused, key-three accepted.
    expect((await get(app.port, '/v1/hello', key)).status).toBe(401);
    r = await get(app.port, '/v1/hello', { 'X-API-Key': 'key-three', Origin: 'https://b.example' });
    expect(r.status).toBe(200);
    // The new CORS origin.
    expect(r.headers['access-control-allow-origin']).toBe('https://b.example');
    // The new level: the handler's debug line is written now.
    await waitFor('the debug line', () => app.child.stdout.includes('debug line from /v1/hello'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    // The new rate limit, with fresh budgets: a burst of 2 at 0.001/s per client address. The
    // key-three call above spent one (the key-two call was refused by auth, which runs first).
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await get(app.port, '/v1/hello', { 'X-API-Key': 'key-one' })).status);
    expect(statuses).toEqual([200, 429, 429]);

    // One Reload record: what changed, no secret.
    const [rec] = records(app.child, 'Reload');
    expect(rec).toBeDefined();
    expect(rec!.get('resCode')).toBe('OK');
    const payloads = JSON.parse(rec!.get('payloads')!) as { result: string; changes: string[] };
    expect(payloads.result).toBe('applied');
    expect(payloads.changes).toContain('httpserver[web].middleware.auth');
    expect(rec!.get('app')).toContain('"entryName":"app"');
    expect(app.child.stdout).not.toContain('key-three');

    const metrics = (await get(app.port, '/metrics')).body;
    expect(reloadsMetric(metrics, 'applied')).toBe(1);
    expect(reloadsMetric(metrics, 'invalid')).toBe(0);
  });

  it('refuses an invalid file with the usual errors, keeps serving with the running configuration, and counts it as invalid', async () => {
    const app = await start();
    const good = bootYaml({ port: app.port });
    const bad = good
      .replace('reqPerSec: 1000', 'reqPerSec: -5')
      .replace('cors: {', 'cors: { alowOrigins: [x], ')
      .replace('apiKey: [key-one, key-two]', 'apiKey: [key-one]');
    await app.reload(bad, REFUSED, 1);
    const out = app.child.stdout;
    expect(out).toMatch(
      /boot\.yaml: reload refused: \d+ problems in the new configuration; the running configuration stays/,
    );
    expect(out).toContain('httpserver[web].middleware.rateLimit.reqPerSec');
    expect(out).toMatch(/httpserver\[web\]\.middleware\.cors\.alowOrigins.*allowOrigins/);
    // Nothing applied: key-two (removed in the refused file) still works.
    expect((await get(app.port, '/v1/hello', { 'X-API-Key': 'key-two' })).status).toBe(200);
    const [rec] = records(app.child, 'Reload');
    expect(rec!.get('resCode')).toBe('InvalidArgument');
    expect(JSON.parse(rec!.get('payloads')!).result).toBe('invalid');
    expect(reloadsMetric((await get(app.port, '/metrics')).body, 'invalid')).toBe(1);
  });

  it('refuses a port change with SVC_RELOAD_NOT_LIVE at its path and applies nothing of the file', async () => {
    const app = await start();
    const other = await freePort();
    const moved = bootYaml({ port: app.port, origins: ['https://b.example'] }).replace(
      `port: ${app.port}`,
      `port: ${other}`,
    );
    await app.reload(moved, REFUSED, 1);
    expect(app.child.stdout).toMatch(
      /boot\.yaml: reload refused: 1 change needs a restart; nothing was applied/,
    );
    expect(app.child.stdout).toMatch(
      /httpserver\[web\]\.port: cannot change while the app runs \(the port the entry listens on\); restart the app to apply it, or put the old value back \[SVC_RELOAD_NOT_LIVE\]/,
    );
    // The CORS change in the same file was not applied.
    const r = await get(app.port, '/v1/hello', {
      'X-API-Key': 'key-one',
      Origin: 'https://b.example',
    });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const [rec] = records(app.child, 'Reload');
    expect(rec!.get('resCode')).toBe('FailedPrecondition');
    expect(JSON.parse(rec!.get('payloads')!).problems).toEqual([
      { path: 'httpserver[web].port', code: 'SVC_RELOAD_NOT_LIVE' },
    ]);
    expect(reloadsMetric((await get(app.port, '/metrics')).body, 'refused')).toBe(1);
  });

  it('lets a call in flight finish with the configuration it started with: its key is removed and logging turned off meanwhile, it succeeds and is recorded; the next call is refused', async () => {
    const app = await start({ logging: true });
    const slow = get(app.port, '/v1/slow', { 'X-API-Key': 'key-two' });
    await waitFor(
      'the slow call to be in its handler',
      () => app.child.stdout.includes('slow call waiting'),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
    await app.reload({ logging: true, keys: ['key-one'] }, APPLIED, 1);
    // Logging off as well, in a second reload: the slow call's record must still be written by
    // the stage it started in.
    await app.reload({ logging: false, keys: ['key-one'] }, APPLIED, 2);
    expect((await get(app.port, '/v1/hello', { 'X-API-Key': 'key-two' })).status).toBe(401);
    expect((await get(app.port, '/v1/release')).status).toBe(200);
    const done = await slow;
    expect(done.status).toBe(200);
    expect(done.body).toBe('slow done');
    await waitFor("the slow call's record", () => records(app.child, 'GET /v1/slow').length === 1, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(records(app.child, 'GET /v1/slow')[0]!.get('resCode')).toBe('200');
    // Calls that started after logging went off have no record.
    expect(records(app.child, 'GET /v1/release')).toHaveLength(0);
  });

  it('with app.workers: 2, the primary relays SIGHUP and both workers apply the change and report it', async () => {
    const app = await start({ workers: 2 });
    await app.reload({ workers: 2, keys: ['key-one'] }, /Worker \d \(pid \d+\) reload applied/, 2);
    expect(app.child.stdout).toMatch(
      /Received SIGHUP; asking 2 workers to reload the configuration/,
    );
    expect(app.child.stdout).toMatch(
      /Worker 1 \(pid \d+\) reload applied: Reload of .* applied: httpserver\[web\]\.middleware\.auth/,
    );
    expect(app.child.stdout).toMatch(
      /Worker 2 \(pid \d+\) reload applied: Reload of .* applied: httpserver\[web\]\.middleware\.auth/,
    );
    // Each new connection goes to the next worker: every one refuses the removed key.
    for (let i = 0; i < 6; i++)
      expect((await get(app.port, '/v1/hello', { 'X-API-Key': 'key-two' })).status).toBe(401);
    const pids = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await get(app.port, '/v1/hello', { 'X-API-Key': 'key-one' });
      expect(r.status).toBe(200);
      pids.add(String(r.headers['x-worker-pid']));
    }
    expect(pids.size).toBe(2);
    expect(records(app.child, 'Reload')).toHaveLength(2);
  });
});
