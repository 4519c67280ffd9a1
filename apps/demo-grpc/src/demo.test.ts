import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { parseConsoleRecord, SEPARATOR } from '@svcboot/entry-core';
import {
  Child,
  chromiumBinary,
  HeadlessChromium,
  isListening,
  plainEnv,
  startOnFreePort,
} from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listServicesByReflection } from '@svcboot/testkit/grpc-reflection';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const META = [
  'x-request-id',
  'x-svc-app-domain',
  'x-svc-app-name',
  'x-svc-app-unix-time',
  'x-svc-app-version',
  'x-svc-received-time',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/;
const PAYLOAD_KEYS = [
  'apiMethod',
  'apiPath',
  'apiProtocol',
  'apiQuery',
  'grpcMethod',
  'grpcService',
  'grpcType',
  'gwMethod',
  'gwPath',
  'gwScheme',
  'gwUserAgent',
  'userAgent',
];

type Ctor = new (
  addr: string,
  creds: ReturnType<typeof credentials.createInsecure>,
  options: Record<string, unknown>,
) => Record<string, (...a: unknown[]) => unknown> & {
  close(): void;
};

let port: number;
let base: string;
let demo: Child;

function grpcClient<T>(file: string, pick: (pkg: never) => Ctor, includeDirs: string[] = []): T {
  const pkg = loadPackageDefinition(
    loadSync(file, { includeDirs, keepCase: true, defaults: true, enums: String }),
  );
  return new (pick(pkg as never))(`127.0.0.1:${port}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  }) as T;
}

function unary(
  client: Record<string, (...a: unknown[]) => unknown>,
  method: string,
  request: unknown,
  md = new Metadata(),
) {
  return new Promise<{
    response: Record<string, unknown>;
    headers: Metadata;
    error?: ServiceError;
  }>((resolve) => {
    let headers = new Metadata();
    const call = client[method]!(
      request,
      md,
      (error: ServiceError | null, response: Record<string, unknown>) =>
        resolve({ response, headers, error: error ?? undefined }),
    ) as {
      on(e: 'metadata', f: (m: Metadata) => void): void;
    };
    call.on('metadata', (m) => (headers = m));
  });
}

/** The console-encoded records in the demo's stdout, as key → value maps. */
function records(stdout: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  let start = stdout.indexOf(SEPARATOR);
  while (start >= 0) {
    const end = stdout.indexOf('\nEOE', start);
    if (end < 0) break;
    out.push(Object.fromEntries(parseConsoleRecord(stdout.slice(start, end + 4))));
    start = stdout.indexOf(SEPARATOR, end);
  }
  return out;
}

beforeAll(async () => {
  // A free port can be taken by another test process before the demo listens on it: the demo
  // then exits (EADDRINUSE) while the port answers for someone else. So the demo counts as up
  // only once it says it listens on that port, and one that exited so is started again.
  ({ child: demo, port } = await startOnFreePort(
    (port) =>
      Child.start(
        process.execPath,
        ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
        { cwd: appDir, env: plainEnv({ PORT: String(port) }) },
      ),
    {
      ready: async (demo, port) =>
        demo.stdout.includes(`listening on port ${port}`) && (await isListening(port)),
      timeoutMs: 60_000,
    },
  ));
  base = `http://127.0.0.1:${port}`;
}, 200_000);

afterAll(() => demo.kill());

describe('demo-grpc end to end', () => {
  let grpcId = '';
  let restId = '';

  it('answers Hello over gRPC with the meta headers as lowercase metadata', async () => {
    const client = grpcClient<Record<string, (...a: unknown[]) => unknown> & { close(): void }>(
      path.join(appDir, 'api/v1/greeter.proto'),
      (p: { api: { v1: { Greeter: Ctor } } }) => p.api.v1.Greeter,
    );
    const r = await unary(client, 'Hello', {});
    client.close();
    expect(r.error).toBeUndefined();
    expect(r.response).toEqual({ message: 'hello!' });
    for (const k of META) expect(r.headers.get(k), k).toHaveLength(1);
    expect(r.headers.get('content-type')).toEqual(['application/grpc']);
    grpcId = String(r.headers.get('x-request-id')[0]);
    expect(grpcId).toMatch(UUID);
    expect(r.headers.get('x-svc-app-name')).toEqual(['demo-grpc']);
    expect(r.headers.get('x-svc-app-version')).toEqual(['0.1.0']);
    expect(String(r.headers.get('x-svc-app-unix-time')[0])).toMatch(ISO);
    expect(String(r.headers.get('x-svc-received-time')[0])).toMatch(ISO);
  });

  it('answers GET /v1/hello with the same message and every meta header', async () => {
    const res = await fetch(`${base}/v1/hello`, { headers: { 'user-agent': 'demo-test/1.0' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'hello!' });
    for (const k of META) expect(res.headers.get(k), k).toBeTruthy();
    restId = res.headers.get('x-request-id')!;
    expect(restId).toMatch(UUID);
    expect(res.headers.get('x-svc-app-name')).toBe('demo-grpc');
    expect(res.headers.get('x-svc-app-unix-time')).toMatch(ISO);
    const traced = await fetch(`${base}/v1/hello`, { headers: { 'x-request-id': 'demo-trace-1' } });
    expect(traced.headers.get('x-request-id')).toBe('demo-trace-1');
  });

  it('lists Greeter through reflection and reports health', async () => {
    const services = await listServicesByReflection(`127.0.0.1:${port}`);
    expect(services).toContain('api.v1.Greeter');

    const dir = await mkdtemp(path.join(os.tmpdir(), 'health-proto-'));
    await writeFile(
      path.join(dir, 'health.proto'),
      'syntax = "proto3";\npackage grpc.health.v1;\nmessage HealthCheckRequest { string service = 1; }\nmessage HealthCheckResponse { enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; } ServingStatus status = 1; }\nservice Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }\n',
    );
    const health = grpcClient<Record<string, (...a: unknown[]) => unknown> & { close(): void }>(
      path.join(dir, 'health.proto'),
      (p: { grpc: { health: { v1: { Health: Ctor } } } }) => p.grpc.health.v1.Health,
    );
    const h = await unary(health, 'Check', { service: 'api.v1.Greeter' });
    health.close();
    await rm(dir, { recursive: true, force: true });
    expect(h.response).toEqual({ status: 'SERVING' });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });

  it('serves /metrics with the gRPC families', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).toMatch(
      /grpc_server_handled_total\{grpc_type="unary",grpc_service="api.v1.Greeter",grpc_method="Hello",grpc_code="OK"\} \d+/,
    );
    expect(text).toMatch(
      /svc_call_elapsed_seconds\{quantile="0.5",entry_name="greeter",entry_type="GrpcEntry",[^}]*rest_path="\/v1\/hello",res_code="OK"\}/,
    );
  });

  // SVC_SKIP_PROMTOOL=1 skips this check (vitest shows it as skipped); otherwise a machine without
  // promtool fails it, saying what to install.
  it.skipIf(process.env['SVC_SKIP_PROMTOOL'] === '1')(
    'serves /metrics that promtool accepts',
    async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain('grpc_server_handled_total');
      const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
      if (promtool.status !== 0) {
        throw new Error(
          'promtool is not on PATH: install it (`apt-get install prometheus` on Debian, or tools/scripts/tools.sh), or set SVC_SKIP_PROMTOOL=1 to skip this check',
        );
      }
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.stdout + check.stderr).toBe('');
      expect(check.status).toBe(0);
    },
  );

  // SVC_SKIP_BROWSER=1 skips this test (vitest shows it as skipped); otherwise a machine without
  // Chromium fails it, saying what to install.
  it.skipIf(process.env['SVC_SKIP_BROWSER'] === '1')(
    'renders /sw/ and /docs/ in headless Chromium with the Hello operation, offline',
    async () => {
      const binary = chromiumBinary();
      if (!binary) {
        throw new Error(
          'Chromium is not on PATH (chromium, chromium-browser or google-chrome): install it (`apt-get install chromium` on Debian, or tools/scripts/tools.sh), or set SVC_SKIP_BROWSER=1 to skip this test',
        );
      }
      const browser = await HeadlessChromium.launch(binary);
      try {
        const sw = await browser.waitInPage(
          `${base}/sw/`,
          `[...document.querySelectorAll('.opblock-summary-path')].map(e => e.textContent).join(' ').includes('/v1/hello') && document.querySelector('.opblock-summary-path').textContent`,
        );
        expect(String(sw)).toContain('/v1/hello');
        // The OpenAPI 3.1 document, picked as swagger-ui's top bar would: it renders the same operation.
        const v3 = await browser.waitInPage(
          `${base}/sw/`,
          `(() => { if (!window.ui || !document.querySelector('.opblock-summary-path')) return ''; const u = new URL('openapi.json', location.href).href; if (!window.__v3) { window.__v3 = true; window.ui.specActions.updateUrl(u); window.ui.specActions.download(u); return ''; } const v = document.querySelector('.version-stamp'); const paths = [...document.querySelectorAll('.opblock-summary-path')].map(e => e.textContent).join(' '); return v && v.textContent.includes('3.1') && paths.includes('/v1/hello') ? v.textContent : ''; })()`,
        );
        expect(String(v3)).toContain('OAS 3.1');
        const docs = await browser.waitInPage(
          `${base}/docs/`,
          `(() => { const r = document.querySelector('rapi-doc'); const t = r && r.shadowRoot ? r.shadowRoot.textContent : ''; return t.includes('/v1/hello') && t.includes('Greeter') ? 'found' : ''; })()`,
        );
        expect(docs).toBe('found');
      } finally {
        await browser.close();
      }
    },
  );

  it('writes a record per call with every key, and the Bootstrap record with the UI addresses', async () => {
    demo.process.kill('SIGTERM');
    expect(await demo.exited).toBe(0);
    const all = records(demo.stdout);
    const boot = all.find(
      (r) => r['operation'] === 'Bootstrap' && r['app']!.includes('"entryType":"GrpcEntry"'),
    )!;
    expect(JSON.parse(boot['payloads']!)).toEqual({
      docsEnabled: true,
      docsPath: '/docs/',
      grpcPort: port,
      gwPort: port,
      promEnabled: true,
      promPath: '/metrics',
      promPort: port,
      swEnabled: true,
      swPath: '/sw/',
    });
    expect(demo.stdout).toContain(`SwaggerEntry: http://localhost:${port}/sw/`);
    expect(demo.stdout).toContain(`DocsEntry: http://localhost:${port}/docs/`);
    expect(demo.stdout).toContain(`PromEntry: http://localhost:${port}/metrics`);

    const byId = (id: string) =>
      all.find((r) => r['ids'] === JSON.stringify({ eventId: id, requestId: id }));
    const g = byId(grpcId)!;
    expect(g).toBeDefined();
    expect(Object.keys(g)).toEqual([
      'endTime',
      'startTime',
      'elapsedNano',
      'timezone',
      'ids',
      'app',
      'env',
      'payloads',
      'counters',
      'pairs',
      'timing',
      'remoteAddr',
      'operation',
      'resCode',
      'eventStatus',
    ]);
    expect(g).toMatchObject({
      operation: '/api.v1.Greeter/Hello',
      resCode: 'OK',
      eventStatus: 'Ended',
    });
    expect(JSON.parse(g['app']!)).toEqual({
      appName: 'demo-grpc',
      appVersion: '0.1.0',
      entryName: 'greeter',
      entryType: 'GrpcEntry',
    });
    const gp = JSON.parse(g['payloads']!) as Record<string, string>;
    expect(Object.keys(gp)).toEqual(PAYLOAD_KEYS);
    expect(gp).toMatchObject({
      apiMethod: 'POST',
      apiPath: '/api.v1.Greeter/Hello',
      apiProtocol: 'HTTP/2',
      grpcService: 'api.v1.Greeter',
      grpcMethod: 'Hello',
      grpcType: 'UnaryServer',
    });

    const r = byId(restId)!;
    expect(r).toMatchObject({ operation: '/api.v1.Greeter/Hello', resCode: 'OK' });
    const rp = JSON.parse(r['payloads']!) as Record<string, string>;
    expect(Object.keys(rp)).toEqual(PAYLOAD_KEYS);
    expect(rp).toMatchObject({
      apiPath: '/api.v1.Greeter/Hello',
      grpcType: 'UnaryServer',
      gwMethod: 'GET',
      gwPath: '/v1/hello',
      gwScheme: 'http',
      gwUserAgent: 'demo-test/1.0',
      userAgent: 'demo-test/1.0',
    });
    expect(byId('demo-trace-1')).toBeDefined();
  });
});
