import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { bufBinary, run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { SOURCE_NODE_ARGS } from './test-support/served.js';

const binTs = fileURLToPath(new URL('../bin.ts', import.meta.url));
const cliDir = fileURLToPath(new URL('../..', import.meta.url));
/** buf (testkit installs the pinned release once, outside the repository), put where svc looks first (.svc/bin). */
const buf = await bufBinary();

// protobufjs's parser rejects the list of messages in the option; protoc and buf accept it.
const SHOP_PROTO = `syntax = "proto3";
package shop.v1;
import "google/api/annotations.proto";
import "google/protobuf/timestamp.proto";
service Shop {
  rpc Get(Item) returns (Item) {
    option (google.api.http) = { get: "/v1/items/{id}" additional_bindings: [ { get: "/v1/shelves/{shelf}/items/{id}" }, { post: "/v1/items/{id}:get" body: "*" } ] };
  }
}
message Item {
  string id = 1;
  string shelf = 2;
  google.protobuf.Timestamp at = 3;
}
`;
/** google.api.HttpRule's fields the fixture uses, with googleapis's numbers. */
const HTTP_PROTO = `syntax = "proto3";
package google.api;
message HttpRule {
  oneof pattern {
    string get = 2;
    string post = 4;
  }
  string body = 7;
  repeated HttpRule additional_bindings = 11;
}
`;
const ANNOTATIONS_PROTO = `syntax = "proto3";
package google.api;
import "google/api/http.proto";
import "google/protobuf/descriptor.proto";
extend google.protobuf.MethodOptions {
  HttpRule http = 72295728;
}
`;

let project: string;

beforeAll(async () => {
  // Inside the workspace, so that the OpenAPI worker resolves @svcboot/entry-grpc from it.
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  project = await mkdtemp(path.join(parent, 'pb-build-'));
  await mkdir(path.join(project, 'proto', 'shop', 'v1'), { recursive: true });
  await mkdir(path.join(project, 'proto', 'google', 'api'), { recursive: true });
  await writeFile(path.join(project, 'proto', 'shop', 'v1', 'shop.proto'), SHOP_PROTO);
  await writeFile(path.join(project, 'proto', 'google', 'api', 'http.proto'), HTTP_PROTO);
  await writeFile(
    path.join(project, 'proto', 'google', 'api', 'annotations.proto'),
    ANNOTATIONS_PROTO,
  );
  await writeFile(
    path.join(project, 'package.json'),
    '{ "name": "pb-build-fixture", "private": true, "type": "module" }\n',
  );
  await writeFile(path.join(project, 'buf.yaml'), 'version: v2\nmodules:\n  - path: proto\n');
});

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

function svc(args: readonly string[]): ReturnType<typeof run> {
  return run(process.execPath, [...SOURCE_NODE_ARGS, binTs, ...args], {
    cwd: project,
    env: process.env,
    allowFailure: true,
  });
}

test('svc pb build without buf or protoc says what to install and writes nothing', async () => {
  // Outside the workspace: no node_modules/.bin above it holds buf.
  const bare = await mkdtemp(path.join(os.tmpdir(), 'svc-pb-build-'));
  try {
    await writeFile(path.join(bare, 'buf.yaml'), 'version: v2\n');
    const env = { ...process.env, PATH: path.dirname(process.execPath) };
    const r = await run(process.execPath, [...SOURCE_NODE_ARGS, binTs, 'pb', 'build'], {
      cwd: bare,
      env,
      allowFailure: true,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('neither buf nor protoc is installed here');
    expect(r.stderr).toContain('@bufbuild/buf');
    expect(existsSync(path.join(bare, 'api.binpb'))).toBe(false);
    const forced = await run(
      process.execPath,
      [...SOURCE_NODE_ARGS, binTs, 'pb', 'build', '--runner', 'buf'],
      { cwd: bare, env, allowFailure: true },
    );
    expect(forced.stderr).toContain('buf is not installed here');
  } finally {
    await rm(bare, { recursive: true, force: true });
  }
});

test('svc pb build writes one FileDescriptorSet with imports, from a file protobufjs cannot parse', async () => {
  await mkdir(path.join(project, '.svc', 'bin'), { recursive: true });
  await symlink(buf, path.join(project, '.svc', 'bin', 'buf'));
  const r = await svc(['pb', 'build', '-o', 'gen/shop.binpb']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('wrote gen/shop.binpb with buf; list it under protos.descriptorSets');
  const set = fromBinary(
    FileDescriptorSetSchema,
    await readFile(path.join(project, 'gen', 'shop.binpb')),
  );
  const names = set.file.map((f) => f.name);
  expect(names).toEqual(
    expect.arrayContaining([
      'shop/v1/shop.proto',
      'google/api/annotations.proto',
      'google/protobuf/descriptor.proto',
      'google/protobuf/timestamp.proto',
    ]),
  );
  const shop = set.file.find((f) => f.name === 'shop/v1/shop.proto');
  expect(shop?.service[0]?.method[0]?.name).toBe('Get');
});

test('svc pb build --runner protoc writes the same files with protoc --include_imports', async () => {
  const code = await main(
    ['install', 'protobuf', '--dir', path.join(project, '.svc', 'bin')],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
  const r = await svc(['pb', 'build', '--runner', 'protoc', '-o', 'gen/by-protoc.binpb']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('--include_imports --descriptor_set_out=gen/by-protoc.binpb -Iproto');
  const byProtoc = fromBinary(
    FileDescriptorSetSchema,
    await readFile(path.join(project, 'gen', 'by-protoc.binpb')),
  );
  const byBuf = fromBinary(
    FileDescriptorSetSchema,
    await readFile(path.join(project, 'gen', 'shop.binpb')),
  );
  expect(byProtoc.file.map((f) => f.name).sort()).toEqual(byBuf.file.map((f) => f.name).sort());
});

test("svc pb openapi covers the services and rules of an entry's descriptorSets", async () => {
  await writeFile(
    path.join(project, 'boot.yaml'),
    'app:\n  name: shop\ngrpc:\n  - name: shop\n    port: 8080\n    protos:\n      descriptorSets: [gen/shop.binpb]\n',
  );
  const r = await svc(['pb', 'openapi', '--out', 'gen/openapi']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const doc = JSON.parse(
    await readFile(path.join(project, 'gen', 'openapi', 'shop.swagger.json'), 'utf8'),
  ) as { paths: Record<string, Record<string, unknown>> };
  expect(Object.keys(doc.paths).sort()).toEqual([
    '/v1/items/{id}',
    '/v1/items/{id}:get',
    '/v1/shelves/{shelf}/items/{id}',
  ]);
  expect(Object.keys(doc.paths['/v1/items/{id}:get'] ?? {})).toEqual(['post']);
});
