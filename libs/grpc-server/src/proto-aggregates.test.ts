import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { loadProtoRoot } from '@svcboot/openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry } from './index.js';
import { protoDir } from './test-support/library-service.js';

// Issue 45 point 2: a .proto that protoc accepts loads from protos.files as protoc reads it.
// test/compat/aggregates.proto uses each option-value construct protobufjs's parser refuses
// (lists of messages, empty lists, `< >`) or misreads (C escapes); the expected strings are
// protoc's reading of the literals (its tokenizer's C escapes: \xHH, \NNN octal, \uHHHH,
// \t, \?, \\, adjacent literals joined).

const proto = path.join(protoDir, 'test/compat/aggregates.proto');
let app: App;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-aggregates-'));
  app = await boot({
    configText: `app:
  name: aggregates
logger:
  - name: quiet
    level: error
grpc:
  - name: agg
    port: 0
    loggerEntry: quiet
    protos:
      files: ["${proto}"]
      includeDirs: ["${protoDir}"]
    sw: { enabled: true }
`,
    cwd: dir,
    argv: [],
    env: { ...process.env },
  });
  const entry = grpcEntry(app, 'agg');
  // proto-loader's own loadSync uses protobufjs's parser too: its definition comes from the root
  // @svcboot/openapi loads.
  const pkg = fromJSON(loadProtoRoot([proto], [protoDir], dir).toJSON(), { keepCase: true });
  entry.addService(pkg['test.compat.Aggregates'] as ServiceDefinition, {
    Get: (call: { request: unknown }, cb: (e: null, v: unknown) => void) => cb(null, call.request),
  });
  await app.bootstrap();
  base = `http://127.0.0.1:${entry.port}`;
});

afterAll(async () => {
  await app?.shutdown('test');
  await rm(dir, { recursive: true, force: true });
});

describe('option values protoc accepts, from protos.files', () => {
  it('google.api.http: a list of bindings, `< >`, an empty list and a repeated block are each a binding', async () => {
    const answers = await Promise.all([
      fetch(`${base}/v1/items/a`),
      fetch(`${base}/v1/things/b`),
      fetch(`${base}/v1/items/c:echo`, { method: 'POST', body: '{"note":"n"}' }),
      fetch(`${base}/v1/others/d`),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await Promise.all(answers.map((r) => r.json()))).toEqual([
      { id: 'a' },
      { id: 'b' },
      { id: 'c', note: 'n' },
      { id: 'd' },
    ]);
  });

  it('openapiv2 options: adjacent strings, C escapes, lists of enums and messages, as protoc reads them', async () => {
    const doc = (await (await fetch(`${base}/sw/swagger.json`)).json()) as {
      info: { title: string; description: string };
      schemes: string[];
      consumes?: string[];
      tags: Array<{ name: string; description?: string }>;
      paths: Record<string, Record<string, { summary?: string }>>;
      definitions: Record<string, { properties: Record<string, Record<string, unknown>> }>;
    };
    expect(doc.info.title).toBe('Aggregates');
    expect(doc.info.description).toBe('café, été, ABC, tab\tend');
    expect(doc.schemes).toEqual(['http', 'https']);
    expect(doc.tags).toEqual(
      expect.arrayContaining([
        { name: 'one', description: 'the first' },
        { name: 'two', description: 'the "second"' },
      ]),
    );
    expect(doc.paths['/v1/items/{id}']?.['get']?.summary).toBe('Gets an item, "quoted" \\ ?');
    expect(doc.definitions['compatItem']?.properties['note']).toMatchObject({
      description: 'a note!',
      maxLength: 10,
    });
  });
});
