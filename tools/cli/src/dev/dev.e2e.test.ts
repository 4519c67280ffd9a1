import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, freePort, plainEnv, SOURCE_NODE_ARGS, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * `svc dev` as a person runs it, on a system of two services in folders of their own (alpha and
 * beta, each an HTTP server answering GET /hello with its name, code version and pid): both
 * answer, an edit to alpha's code restarts alpha alone, an edit to beta's boot.yaml reloads beta
 * in the same process, the JSON copy of the records is written, and one SIGINT stops everything.
 */

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const root = path.join(cliDir, '.test-tmp', `dev-${process.pid}-${Date.now()}`);
let dev: Child;
const ports: Record<string, number> = {};

const mainTs = (
  name: string,
  version: string,
): string => `import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';

const VERSION = '${version}';
await runApp((app) => {
  httpEntry(app, 'web').router.get('/hello', (ctx) => {
    ctx.body = { service: '${name}', version: VERSION, pid: process.pid };
  });
});
`;
const bootYaml = (name: string, level: string): string => `app:
  name: ${name}
logger:
  - name: quiet
    level: ${level}
event:
  - name: records
    encoding: json
    default: true
    outputPaths: [stdout]
httpserver:
  - name: web
    port: \${${name.toUpperCase()}_PORT}
    host: 127.0.0.1
    loggerEntry: quiet
    eventEntry: records
    middleware:
      logging: { enabled: true }
`;

interface Hello {
  service: string;
  version: string;
  pid: number;
}
async function hello(name: string): Promise<Hello> {
  const res = await fetch(`http://127.0.0.1:${ports[name]}/hello`);
  if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}`);
  return (await res.json()) as Hello;
}
/** The records svc dev's JSON copy holds for `name` (its folder is in svc dev's first line). */
function records(name: string): Array<Record<string, unknown>> {
  const runDir = /records copied to (\S+);/.exec(dev.stderr)?.[1];
  if (runDir === undefined) return [];
  const file = path.join(runDir, `${name}.records.records.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
/** The dashboard's address, from svc dev's line. */
function dashboardUrl(): string {
  const url = /\[svc dev\] dashboard: (\S+)/.exec(dev.stderr)?.[1];
  if (url === undefined) throw new Error(`no dashboard line in:\n${dev.stderr}`);
  return url;
}
/** A GET with the headers as given (fetch would not send another Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}
interface LiveRecord {
  seq: number;
  service: string;
  status: string;
  record: Record<string, unknown>;
}
/**
 * Reads server-sent events as EventSource does (event/data/id fields, a blank line ends one)
 * until `until` accepts the records so far; rejects at the deadline.
 */
async function readEvents(
  url: string,
  until: (records: LiveRecord[]) => boolean,
  timeoutMs = 20_000,
): Promise<LiveRecord[]> {
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`no matching records from ${url}`)),
    timeoutMs,
  );
  const records: LiveRecord[] = [];
  try {
    const res = await fetch(url, { signal: abort.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (event === 'record' && data.length > 0)
          records.push(JSON.parse(data.join('\n')) as LiveRecord);
        end = buffer.indexOf('\n\n');
      }
      if (until(records)) return records;
    }
    throw new Error(`the stream ended; records: ${JSON.stringify(records)}`);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** Whether `pid` runs (a negative pid: whether a process of that group does). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  for (const name of ['alpha', 'beta']) {
    const dir = path.join(root, name);
    mkdirSync(path.join(dir, 'src'), { recursive: true });
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name, private: true, type: 'module' }),
    );
    writeFileSync(path.join(dir, 'boot.yaml'), bootYaml(name, 'warn'));
    writeFileSync(path.join(dir, 'src', 'main.ts'), mainTs(name, 'v1'));
    ports[name] = await freePort();
  }
  writeFileSync(
    path.join(root, 'svc.system.yaml'),
    'name: pair\nservices:\n  alpha: { dir: alpha }\n  beta: { dir: beta }\n',
  );
  dev = Child.start(
    process.execPath,
    [...SOURCE_NODE_ARGS, 'src/bin.ts', 'dev', '--dir', root, '--dashboard-port', '0'],
    {
      cwd: cliDir,
      env: plainEnv({
        ALPHA_PORT: String(ports['alpha']),
        BETA_PORT: String(ports['beta']),
      }),
    },
  );
}, 30_000);

afterAll(async () => {
  // After a failed test svc dev may still run: SIGINT stops its services (SIGKILL would orphan them).
  if (dev && dev.process.exitCode === null && dev.process.signalCode === null) {
    dev.process.kill('SIGINT');
    await dev.waitForExit(30_000).catch(() => dev.kill());
  }
  rmSync(root, { recursive: true, force: true });
});

describe('svc dev', () => {
  let alphaPid = 0;
  let betaPid = 0;

  it('starts each service of the system in its own process, and copies their records as JSON', async () => {
    const [alpha, beta] = await waitFor(
      'alpha and beta to answer',
      async () => Promise.all([hello('alpha'), hello('beta')]),
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect(alpha).toMatchObject({ service: 'alpha', version: 'v1' });
    expect(beta).toMatchObject({ service: 'beta', version: 'v1' });
    expect(alpha.pid).not.toBe(beta.pid);
    expect(alpha.pid).not.toBe(dev.process.pid);
    alphaPid = alpha.pid;
    betaPid = beta.pid;
    expect(dev.stderr).toContain(`alpha: started pid ${alpha.pid}`);
    // Each call's record, in the JSON copy the overrides turned on (boot.yaml untouched).
    const rec = await waitFor('alpha to record its call', () =>
      records('alpha').find((r) => String(r['operation']).includes('/hello')),
    );
    expect(rec['resCode']).toBe('200');
    expect(readFileSync(path.join(root, 'alpha', 'boot.yaml'), 'utf8')).toBe(
      bootYaml('alpha', 'warn'),
    );
  }, 120_000);

  it('serves a dashboard on loopback: its page, the catalog, live records filtered by service and status; Host and Origin checked', async () => {
    const url = dashboardUrl();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const port = new URL(url).port;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>svc dev</title>');
    // Another name for 127.0.0.1 (a rebound DNS name) or another site's page: refused.
    expect(await rawGet(url, { host: `rebound.example:${port}` })).toBe(403);
    expect(await rawGet(url, { host: `localhost:${port}` })).toBe(200);
    expect(await rawGet(`${url}api/catalog`, { origin: 'http://evil.example' })).toBe(403);
    expect(await rawGet(`${url}api/catalog`, { origin: `http://127.0.0.1:${port}` })).toBe(200);

    const catalog = (await (await fetch(`${url}api/catalog`)).json()) as {
      services: Array<{
        name: string;
        entries: Array<{ kind: string; name: string; port: string }>;
      }>;
    };
    expect(catalog.services.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(catalog.services[0]?.entries.find((e) => e.kind === 'httpserver')).toMatchObject({
      name: 'web',
      port: '${ALPHA_PORT}',
    });

    // beta answers 404 for a path it does not serve: an error record, beta's only.
    const missing = await fetch(`http://127.0.0.1:${ports['beta']}/missing`);
    expect(missing.status).toBe(404);
    const errors = await readEvents(`${url}api/records?service=beta&status=error`, (rs) =>
      rs.some((r) => String(r.record['operation']).includes('/missing')),
    );
    expect(errors.every((r) => r.service === 'beta' && r.status === 'error')).toBe(true);
    expect(
      errors.find((r) => String(r.record['operation']).includes('/missing'))?.record['resCode'],
    ).toBe('404');
    await hello('alpha');
    const alphaOk = await readEvents(`${url}api/records?service=alpha&status=ok`, (rs) =>
      rs.some((r) => String(r.record['operation']).includes('/hello')),
    );
    expect(alphaOk.every((r) => r.service === 'alpha' && r.status === 'ok')).toBe(true);
  }, 60_000);

  it('restarts the one service whose code changed', async () => {
    writeFileSync(path.join(root, 'alpha', 'src', 'main.ts'), mainTs('alpha', 'v2'));
    const alpha = await waitFor(
      'alpha to answer with its new code',
      async () => {
        const h = await hello('alpha');
        return h.version === 'v2' ? h : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(alpha.pid).not.toBe(alphaPid);
    expect(alive(alphaPid)).toBe(false);
    expect(dev.stderr).toContain('alpha: restarting (src/main.ts changed)');
    // beta is the same process.
    expect((await hello('beta')).pid).toBe(betaPid);
    expect(dev.stderr).not.toContain('beta: restarting');
    // The dashboard shows the same lines (its graph view, "What svc dev did").
    const { lines } = (await (await fetch(`${dashboardUrl()}api/log`)).json()) as {
      lines: Array<{ time: string; line: string }>;
    };
    expect(lines.map((l) => l.line)).toContain(
      `alpha: started pid ${alpha.pid} (src/main.ts (tsx))`,
    );
    expect(lines.some((l) => l.line.startsWith('alpha: restarting (src/main.ts changed)'))).toBe(
      true,
    );
    alphaPid = alpha.pid;
  }, 90_000);

  it('reloads a service whose boot.yaml alone changed: SIGHUP, same pid', async () => {
    writeFileSync(path.join(root, 'beta', 'boot.yaml'), bootYaml('beta', 'info'));
    const reload = await waitFor(
      "beta's Reload record",
      () => records('beta').find((r) => r['operation'] === 'Reload'),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect((reload['payloads'] as Record<string, unknown>)['result']).toBe('applied');
    expect(dev.stderr).toContain(`beta: reloading (boot.yaml changed): SIGHUP to pid ${betaPid}`);
    expect((await hello('beta')).pid).toBe(betaPid);
    expect((await hello('alpha')).pid).toBe(alphaPid);
  }, 60_000);

  it('one SIGINT stops every service and svc dev itself, leaving no process behind', async () => {
    dev.process.kill('SIGINT');
    const code = await dev.waitForExit(30_000).catch((err: unknown) => {
      throw new Error(
        `${String(err)}; svc dev's last lines:\n${dev.stderr.split('\n').slice(-15).join('\n')}`,
      );
    });
    expect(code).toBe(0);
    expect(dev.stderr).toContain('[svc dev] stopped');
    // Each service led its own process group: nothing of either is left (tsx's esbuild included).
    expect(alive(-alphaPid)).toBe(false);
    expect(alive(-betaPid)).toBe(false);
    const runDir = /records copied to (\S+);/.exec(dev.stderr)?.[1];
    expect(runDir !== undefined && existsSync(runDir)).toBe(false);
  }, 60_000);
});
