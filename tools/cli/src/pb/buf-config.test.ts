import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { readGenPlugins, readProtoRoots } from './buf-config.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-bufcfg-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function gen(text: string): Promise<string> {
  const f = path.join(dir, 'buf.gen.yaml');
  await writeFile(f, text);
  return f;
}

test('v2 local and builtin plugins, v1 name/plugin, options as list or string', async () => {
  const f = await gen(`version: v2
plugins:
  - local: protoc-gen-es
    out: gen/es
    opt: [target=ts]
  - local: [node_modules/.bin/protoc-gen-ts_proto, --flag]
    out: gen/ts
  - protoc_builtin: python
    out: gen/py
    opt: pyi_out=x
`);
  expect(readGenPlugins(f)).toEqual([
    { name: 'es', out: 'gen/es', opts: ['target=ts'] },
    { name: 'ts_proto', out: 'gen/ts', opts: [] },
    { name: 'python', out: 'gen/py', opts: ['pyi_out=x'] },
  ]);
  const v1 = await gen(
    'version: v1\nplugins:\n  - name: go\n    out: gen/go\n    opt: paths=source_relative\n  - plugin: go-grpc\n    out: gen/go\n',
  );
  expect(readGenPlugins(v1).map((p) => p.name)).toEqual(['go', 'go-grpc']);
});

test('known registry plugins become local ones; unknown ones and missing fields are errors', async () => {
  const f = await gen(`version: v2
plugins:
  - remote: buf.build/grpc-ecosystem/openapiv2:v2.27.3
    out: gen/openapiv2
  - plugin: buf.build/community/stephenh-ts-proto
    out: gen/ts
`);
  expect(readGenPlugins(f)).toEqual([
    {
      name: 'openapiv2',
      out: 'gen/openapiv2',
      opts: [],
      remote: 'buf.build/grpc-ecosystem/openapiv2',
    },
    { name: 'ts_proto', out: 'gen/ts', opts: [], remote: 'buf.build/community/stephenh-ts-proto' },
  ]);
  expect(() => readGenPlugins(gen0('  - remote: buf.build/someone/thing\n    out: x\n'))).toThrow(
    /remote plugin buf\.build\/someone\/thing, which has no local equivalent/,
  );
  expect(() => readGenPlugins(gen0('  - local: protoc-gen-es\n'))).toThrow(
    /plugins\[0\] \(es\) has no `out`/,
  );
  expect(() => readGenPlugins(gen0(''))).toThrow(/lists no plugins/);
});

function gen0(items: string): string {
  const f = path.join(dir, `t${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(f, `version: v2\nplugins:\n${items}`);
  return f;
}

test('proto roots from buf.yaml v2 modules, v1beta1 build.roots, buf.work.yaml, or "."', async () => {
  expect(readProtoRoots(dir)).toEqual(['.']);
  await writeFile(
    path.join(dir, 'buf.yaml'),
    'version: v1beta1\nbuild:\n  roots:\n    - api\n    - third-party/googleapis\n',
  );
  expect(readProtoRoots(dir)).toEqual(['api', 'third-party/googleapis']);
  await writeFile(path.join(dir, 'buf.yaml'), 'version: v2\nmodules:\n  - path: proto\n');
  expect(readProtoRoots(dir)).toEqual(['proto']);
  await writeFile(path.join(dir, 'buf.work.yaml'), 'version: v1\ndirectories: [a, b]\n');
  expect(readProtoRoots(dir)).toEqual(['a', 'b']);
});
