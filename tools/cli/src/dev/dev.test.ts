import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  dev = Child.start(process.execPath, [...SOURCE_NODE_ARGS, 'src/bin.ts', 'dev', '--dir', root], {
    cwd: cliDir,
    env: plainEnv({
      ALPHA_PORT: String(ports['alpha']),
      BETA_PORT: String(ports['beta']),
    }),
  });
}, 30_000);

afterAll(async () => {
  dev?.kill();
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
