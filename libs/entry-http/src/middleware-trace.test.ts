// Makes middleware.trace configurable, as an app's import of the package does.
import '@svcboot/middleware-trace';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, parseConsoleRecord, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { httpEntry } from './index.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

let app: App | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.shutdown().catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
  app = undefined;
  dir = undefined;
});

/** An httpserver entry with tracing to a file exporter (JSON lines) and console records. */
async function start(traceYaml: string): Promise<{ base: string; spans: string; events: string }> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-trace-'));
  const spans = path.join(dir, 'spans.jsonl');
  const events = path.join(dir, 'events.log');
  app = await boot({
    argv: [],
    env: {},
    cwd: dir,
    configText: [
      'app: { name: httpdemo, version: 1.2.3 }',
      'event:',
      `  - name: ev\n    outputPaths: ["${events}"]`,
      'httpserver:',
      '  - name: api',
      '    port: 0',
      '    host: 127.0.0.1',
      '    eventEntry: ev',
      '    middleware:',
      '      logging: { enabled: true }',
      '      trace:',
      '        enabled: true',
      `        exporter: { file: { enabled: true, outputPath: "${spans}" } }`,
      traceYaml,
    ].join('\n'),
  });
  const entry = httpEntry(app, 'api');
  entry.router.get('/v1/users/:id', (ctx) => {
    ctx.body = { id: ctx.params['id'] };
  });
  entry.router.get('/v1/boom', () => {
    throw new Error('boom');
  });
  await app.bootstrap();
  return { base: `http://127.0.0.1:${entry.port}`, spans, events };
}

async function spanLines(file: string): Promise<Array<Record<string, unknown>>> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the trace middleware on an httpserver entry', () => {
  it('a span per call named after the route template, with http.* attributes, the incoming W3C parent, X-Trace-Id, the ids in the console record; 5xx is an error', async () => {
    const s = await start('');
    const ok = await fetch(`${s.base}/v1/users/42`, {
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect(ok.headers.get('x-trace-id')).toBe(TRACE_ID);
    const boom = await fetch(`${s.base}/v1/boom`);
    expect(boom.status).toBe(500);
    await boom.arrayBuffer();
    const boomTrace = boom.headers.get('x-trace-id');
    expect(boomTrace).toMatch(/^[0-9a-f]{32}$/);
    await app!.shutdown();

    const spans = await spanLines(s.spans);
    const user = spans.find((x) => x['name'] === 'GET /v1/users/:id');
    expect(user).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: PARENT_ID,
      kind: 'server',
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/v1/users/:id',
        'url.path': '/v1/users/42',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
        'network.peer.address': '127.0.0.1',
      },
      status: { code: 'unset' },
      resource: { 'service.name': 'httpdemo', 'svc.entry.type': 'HttpEntry' },
    });
    const failed = spans.find((x) => x['name'] === 'GET /v1/boom');
    expect(failed).toMatchObject({
      traceId: boomTrace,
      parentSpanId: '',
      attributes: { 'http.response.status_code': 500 },
      status: { code: 'error', message: 'boom' },
    });
    expect(((failed?.['events'] ?? []) as Array<{ name: string }>).map((e) => e.name)).toEqual([
      'exception',
    ]);

    const recs = (await readFile(s.events, 'utf8'))
      .split(/(?<=\nEOE\n)/)
      .filter((c) => c.trim() !== '')
      .map((c) => Object.fromEntries(parseConsoleRecord(c)));
    const rec = recs.find((r) => r['operation'] === 'GET /v1/users/:id');
    expect(JSON.parse(rec?.['ids'] ?? '{}')).toMatchObject({
      traceId: TRACE_ID,
      spanId: user?.['spanId'],
    });
  });

  it('propagator: b3 reads B3 headers (multi and single) instead of traceparent', async () => {
    const s = await start('        propagator: b3');
    const multi = await fetch(`${s.base}/v1/users/1`, {
      headers: { 'x-b3-traceid': TRACE_ID, 'x-b3-spanid': PARENT_ID, 'x-b3-sampled': '1' },
    });
    await multi.arrayBuffer();
    const single = await fetch(`${s.base}/v1/users/2`, {
      headers: { b3: `${TRACE_ID}-${PARENT_ID}-1` },
    });
    await single.arrayBuffer();
    const w3c = await fetch(`${s.base}/v1/users/3`, {
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    await w3c.arrayBuffer();
    expect([multi, single].map((r) => r.headers.get('x-trace-id'))).toEqual([TRACE_ID, TRACE_ID]);
    expect(w3c.headers.get('x-trace-id')).not.toBe(TRACE_ID);
    await app!.shutdown();
    const spans = await spanLines(s.spans);
    expect(spans.filter((x) => x['parentSpanId'] === PARENT_ID)).toHaveLength(2);
  });
});
