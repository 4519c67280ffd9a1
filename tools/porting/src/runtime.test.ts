import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { boot, configEntry, type App } from '@svcboot/entry-core';
import { httpEntry, httpPlugin } from '@svcboot/entry-http';
import { waitFor } from '@svcboot/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The rk-boot options with a run-time effect, on a real httpserver entry and real HTTP calls.

let app: App | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'porting-'));
});
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function serve(yaml: string, env: Record<string, string> = {}): Promise<string> {
  app = await boot({ argv: [], env, plugins: [httpPlugin], configText: yaml });
  const entry = httpEntry(app, 'greeter');
  entry.router.get('/v1/hello', (ctx) => {
    ctx.body = { message: 'hello' };
  });
  entry.router.get('/v1/healthy', (ctx) => {
    ctx.body = { ok: true };
  });
  await app.bootstrap();
  return `http://127.0.0.1:${entry.port}`;
}

const jsonRecords = (file: string): { operation: string }[] => {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as { operation: string };
      } catch {
        throw new Error(`not a JSON record: ${text.slice(0, 300)}`);
      }
    });
};

describe('rk-boot middleware options on a real httpserver entry', () => {
  it('meta.prefix names the app headers; meta.ignore skips them', async () => {
    const base = await serve(`
app: { name: greeter, version: 1.2.3 }
logger: [{ name: quiet, level: silent }]
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    middleware:
      meta: { enabled: true, prefix: RK, ignore: [/v1/healthy] }
`);
    const res = await fetch(`${base}/v1/hello`);
    // rk-boot's names: fmt.Sprintf("X-%s-App-Name", prefix) and the like (rk-entry middleware/meta).
    expect(res.headers.get('x-rk-app-name')).toBe('greeter');
    expect(res.headers.get('x-rk-app-version')).toBe('1.2.3');
    expect(res.headers.get('x-rk-app-unix-time')).not.toBeNull();
    expect(res.headers.get('x-rk-received-time')).not.toBeNull();
    expect(res.headers.get('x-svc-app-name')).toBeNull();
    expect(res.headers.get('x-request-id')).not.toBeNull();
    const ignored = await fetch(`${base}/v1/healthy`);
    expect(ignored.status).toBe(200);
    expect(ignored.headers.get('x-rk-app-name')).toBeNull();
  });

  it("middleware.ignore skips every middleware; logging's records go to its own outputs", async () => {
    const records = path.join(dir, 'calls.log');
    const base = await serve(`
app: { name: greeter }
logger: [{ name: quiet, level: silent }]
event: [{ name: entry-events, encoding: json, outputPaths: [${path.join(dir, 'entry-events.log')}] }]
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    eventEntry: entry-events
    prom: { enabled: true }
    middleware:
      ignore: ["", /v1/healthy]
      logging: { enabled: true, eventEncoding: json, eventOutputPaths: [${records}] }
      prom: { enabled: true, ignore: [/metrics] }
      meta: { enabled: true }
`);
    expect((await fetch(`${base}/v1/healthy`)).status).toBe(200);
    expect((await fetch(`${base}/v1/hello`)).status).toBe(200);
    const written = await waitFor('the /v1/hello record', () => {
      const r = jsonRecords(records);
      return r.some((x) => x.operation === 'GET /v1/hello') ? r : undefined;
    });
    // The ignored call has no record (the records of one turn are written together).
    expect(written.map((r) => r.operation)).toEqual(['GET /v1/hello']);
    expect((await fetch(`${base}/v1/healthy`)).headers.get('x-svc-app-name')).toBeNull();
    expect((await fetch(`${base}/v1/hello`)).headers.get('x-svc-app-name')).toBe('greeter');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/svc_call_elapsed_seconds_count\{[^}]*rest_path="\/v1\/hello"/);
    expect(metrics).not.toMatch(/rest_path="\/v1\/healthy"/);
    expect(metrics).not.toMatch(/rest_path="\/metrics"/);
    // The calls' records are not in the entry's event entry (its Bootstrap record is).
    await app!.shutdown('test');
    app = undefined;
    const entryRecords = jsonRecords(path.join(dir, 'entry-events.log')).map((r) => r.operation);
    expect(entryRecords).toContain('Bootstrap');
    expect(entryRecords.filter((o) => o.startsWith('GET '))).toEqual([]);
  });

  it("the common service's info shows the app metadata", async () => {
    const base = await serve(`
app:
  name: greeter
  version: 1.0.0
  description: says hello
  keywords: [rk, golang]
  homeUrl: https://example.com
  docsUrl: https://example.com/docs
  maintainers: [rk-dev]
logger: [{ name: quiet, level: silent }]
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    commonService: { enabled: true, pathPrefix: "" }
`);
    const info = (await (await fetch(`${base}/svc/v1/info`)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      appName: 'greeter',
      keywords: ['rk', 'golang'],
      homeUrl: 'https://example.com',
      docsUrl: ['https://example.com/docs'],
      maintainers: ['rk-dev'],
    });
  });

  it("a default logger is every entry's without a loggerEntry; initialFields are on its lines", async () => {
    const log = path.join(dir, 'app.log');
    app = await boot({
      argv: [],
      env: {},
      plugins: [httpPlugin],
      configText: `
logger:
  - name: my-logger
    default: true
    zap:
      level: info
      encoding: json
      outputPaths: [${log}]
      initialFields: { team: payments }
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
`,
    });
    const entry = httpEntry(app, 'greeter');
    entry.router.get('/v1/hello', (ctx) => {
      ctx.body = { ok: true };
    });
    await app.bootstrap();
    const lines = await waitFor('a line from the httpserver entry', () => {
      let text = '';
      try {
        text = readFileSync(log, 'utf8');
      } catch {
        return undefined;
      }
      const parsed = text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      return parsed.some((l) => l['entryName'] === 'greeter') ? parsed : undefined;
    });
    expect(lines.find((l) => l['entryName'] === 'greeter')).toMatchObject({ team: 'payments' });
  });
});

describe("gin's sw and docs on an httpserver entry", () => {
  it('serve Swagger UI and RapiDoc on the OpenAPI files the app provides', async () => {
    const folder = path.join(dir, 'docs');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    const a = JSON.stringify({ swagger: '2.0', info: { title: 'a', version: '1' }, paths: {} });
    const b = JSON.stringify({ swagger: '2.0', info: { title: 'b', version: '1' }, paths: {} });
    writeFileSync(path.join(folder, 'a.swagger.json'), a);
    writeFileSync(path.join(folder, 'b.swagger.json'), b);
    writeFileSync(path.join(folder, 'notes.txt'), 'not a spec');
    const base = await serve(`
app: { name: greeter }
logger: [{ name: quiet, level: silent }]
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    sw: { enabled: true, path: sw, jsonPaths: [${folder}], headers: ["X-Sw:rk"] }
    docs: { enabled: true, specPaths: [${path.join(folder, 'b.swagger.json')}], style: { theme: dark } }
`);
    const index = await fetch(`${base}/sw/`);
    expect([index.status, index.headers.get('x-sw')]).toEqual([200, 'rk']);
    expect(await index.text()).toContain('swagger-initializer.js');
    const init = await (await fetch(`${base}/sw/swagger-initializer.js`)).text();
    expect(init).toContain('"a.swagger.json"');
    expect(init).toContain('"b.swagger.json"');
    expect(await (await fetch(`${base}/sw/a.swagger.json`)).text()).toBe(a);
    expect((await fetch(`${base}/sw/notes.txt`)).status).toBe(404);
    expect((await fetch(`${base}/sw`, { redirect: 'manual' })).headers.get('location')).toBe(
      '/sw/',
    );
    const docs = await (await fetch(`${base}/docs/`)).text();
    expect(docs).toContain('spec-url="b.swagger.json"');
    expect(docs).toContain('theme="dark"');
    expect(await (await fetch(`${base}/docs/b.swagger.json`)).text()).toBe(b);
  });

  it('fail the bootstrap when the spec folder is not there', async () => {
    app = await boot({
      argv: [],
      env: {},
      plugins: [httpPlugin],
      configText: `httpserver:\n  - name: greeter\n    port: 0\n    host: 127.0.0.1\n    sw: { enabled: true, jsonPaths: [${path.join(dir, 'none')}] }\n`,
    });
    await expect(app.bootstrap()).rejects.toMatchObject({
      cause: expect.objectContaining({ code: 'SVC_HTTP_API_SPEC_MISSING' }),
    });
  });
});

describe("a logger entry's lumberjack", () => {
  it('rotates its files, keeping maxbackups of them', async () => {
    const log = path.join(dir, 'app.log');
    app = await boot({
      argv: [],
      env: {},
      plugins: [],
      configText: `
logger:
  - name: my-logger
    zap: { encoding: json, outputPaths: [${log}] }
    lumberjack: { filename: "", maxsize: 0.001, maxbackups: 1, localtime: true }
`,
    });
    const { LoggerEntry } = await import('@svcboot/entry-core');
    const logger = app.entry<InstanceType<typeof LoggerEntry>>('my-logger', 'logger').logger;
    const { readdirSync } = await import('node:fs');
    const written = (i: number) =>
      readdirSync(dir).some((f) => readFileSync(path.join(dir, f), 'utf8').includes(`"i":${i},`));
    for (let i = 0; i < 40; i++) {
      logger.info({ i }, 'x'.repeat(80));
      // Each line written before the next (rotation happens between writes).
      await waitFor(`line ${i} written`, () => written(i));
    }
    await app.shutdown('test');
    app = undefined;
    const files = readdirSync(dir).sort();
    expect(files).toContain('app.log');
    const backups = files.filter((f) => f !== 'app.log');
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(/^app-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}(-1)?\.log$/);
  });
});

describe('the config entry', () => {
  it('reads a file, content over it, and the environment over both', async () => {
    const file = path.join(dir, 'config.yaml');
    writeFileSync(file, 'db:\n  host: file-host\n  port: 5432\nname: from-file\n');
    app = await boot({
      argv: [],
      env: { MYAPP_DB_PORT: '6543' },
      plugins: [],
      configText: `
config:
  - name: my-config
    path: ${file}
    envPrefix: myapp
    content: { name: from-content, db: { user: alice } }
`,
    });
    const c = configEntry(app, 'my-config');
    expect(c.get('db.host')).toBe('file-host');
    expect(c.get('db.user')).toBe('alice');
    expect(c.get('name')).toBe('from-content');
    expect(c.get('db.port')).toBe('6543');
    expect(c.getString('missing', 'x')).toBe('x');
  });

  it('fails on a missing file unless optional, as rk-boot skips it', async () => {
    const yaml = (optional: boolean) =>
      `config:\n  - name: c\n    path: ${path.join(dir, 'nope.yaml')}\n    optional: ${optional}\n`;
    await expect(boot({ argv: [], env: {}, plugins: [], configText: yaml(false) })).rejects.toThrow(
      /config\[c\]\.path: cannot read .*nope\.yaml: ENOENT/,
    );
    app = await boot({ argv: [], env: {}, plugins: [], configText: yaml(true) });
    expect(configEntry(app, 'c').all()).toEqual({});
  });
});

describe('the porting mode at boot', () => {
  it('logs a warning per dropped key and lists them on the app', async () => {
    const text = `
app: { name: ported, porting: rk-boot, iconUrl: x }
httpserver:
  - name: greeter
    port: 0
    host: 127.0.0.1
    tv: { enabled: true }
    middleware:
      loggingZap: { enabled: true }
`;
    app = await boot({ argv: [], env: {}, plugins: [httpPlugin], configText: text });
    expect(app.configWarnings.map((w) => [w.path, w.code])).toEqual([
      ['app.iconUrl', 'SVC_PORTING_RK_IGNORED'],
      ['httpserver[greeter].tv', 'SVC_PORTING_RK_IGNORED'],
      ['httpserver[greeter].middleware.loggingZap', 'SVC_PORTING_RK_IGNORED'],
    ]);
    await app.shutdown('test');
    app = undefined;
    // Without it, the same keys are errors, each with the keys allowed where it is.
    const strict = await boot({
      argv: [],
      env: {},
      plugins: [httpPlugin],
      configText: text.replace('porting: rk-boot, ', ''),
    }).then(
      () => undefined,
      (e: { issues: { path: string; message: string }[] }) => e.issues,
    );
    expect(strict?.map((i) => i.path)).toEqual([
      'app.iconUrl',
      'httpserver[greeter].tv',
      'httpserver[greeter].middleware.loggingZap',
    ]);
    expect(strict?.[2]?.message).toMatch(
      /unknown key "loggingZap"; did you mean "logging"\? \(allowed: ignore, logging, prom, meta/,
    );
  });

  it('SVC_PORTING=rk-boot turns it on from outside the file', async () => {
    app = await boot({
      argv: [],
      env: { SVC_PORTING: 'rk-boot' },
      plugins: [],
      configText:
        'logger:\n  - name: l\n    loki: { enabled: false }\n    zap: { development: true }\n    colour: blue\n',
    });
    expect(app.configWarnings.map((w) => [w.path, w.code])).toEqual([
      ['logger[l].zap.development', 'SVC_PORTING_IGNORED'],
      ['logger[l].colour', 'SVC_PORTING_RK_IGNORED'],
    ]);
  });
});
