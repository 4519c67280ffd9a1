// Makes middleware.trace configurable, as an app's import of the package does.
import '@svcboot/middleware-trace';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { httpEntry } from './index.js';

/**
 * A span on an httpserver entry is named after koa's route template, not the path. The rest of
 * tracing (parents, propagators, sampling, records, refusals, errors) is checked on every
 * transport by tools/conformance.
 */

let app: App | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.shutdown().catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
  app = undefined;
  dir = undefined;
});

/** An httpserver entry with tracing to a file exporter (JSON lines) and console records. */
async function start(traceYaml: string): Promise<{ base: string; spans: string }> {
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
  await app.bootstrap();
  return { base: `http://127.0.0.1:${entry.port}`, spans };
}

async function spanLines(file: string): Promise<Array<Record<string, unknown>>> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the trace middleware on an httpserver entry', () => {
  it('names the span after the route template, which http.route gives; url.path is the path', async () => {
    const s = await start('');
    const ok = await fetch(`${s.base}/v1/users/42`);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    await app!.shutdown();
    const spans = await spanLines(s.spans);
    expect(spans.find((x) => x['name'] === 'GET /v1/users/:id')).toMatchObject({
      kind: 'server',
      attributes: { 'http.route': '/v1/users/:id', 'url.path': '/v1/users/42' },
      resource: { 'service.name': 'httpdemo', 'svc.entry.type': 'HttpEntry' },
    });
  });
});
