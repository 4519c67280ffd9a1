import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { SOURCE_NODE_ARGS } from './test-support/served.js';

const require = createRequire(import.meta.url);
const binTs = fileURLToPath(new URL('../bin.ts', import.meta.url));
/** buf from the @bufbuild/buf devDependency, put where svc looks first (.svc/bin). */
const buf = path.join(path.dirname(require.resolve('@bufbuild/buf/package.json')), 'bin', 'buf');

// protobufjs's parser rejects the list of messages in the option; protoc and buf accept it.
const SHOP_PROTO = `syntax = "proto3";
package shop.v1;
import "google/protobuf/descriptor.proto";
import "google/protobuf/timestamp.proto";
message Rule {
  string path = 1;
  repeated Rule more = 2;
}
extend google.protobuf.MethodOptions {
  Rule rule = 50001;
}
service Shop {
  rpc Get(Item) returns (Item) {
    option (shop.v1.rule) = { path: "/a" more: [ { path: "/b" }, { path: "/c" } ] };
  }
}
message Item {
  google.protobuf.Timestamp at = 1;
}
`;

let project: string;

beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'svc-pb-build-'));
  await mkdir(path.join(project, 'proto', 'shop', 'v1'), { recursive: true });
  await writeFile(path.join(project, 'proto', 'shop', 'v1', 'shop.proto'), SHOP_PROTO);
  await writeFile(path.join(project, 'buf.yaml'), 'version: v2\nmodules:\n  - path: proto\n');
});

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

function svc(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ReturnType<typeof run> {
  return run(process.execPath, [...SOURCE_NODE_ARGS, binTs, ...args], { cwd: project, env, allowFailure: true });
}

test('svc pb build without buf or protoc says what to install and writes nothing', async () => {
  const r = await svc(['pb', 'build'], { ...process.env, PATH: path.dirname(process.execPath) });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('neither buf nor protoc is installed here');
  expect(r.stderr).toContain('@bufbuild/buf');
  expect(existsSync(path.join(project, 'api.binpb'))).toBe(false);
  const forced = await svc(['pb', 'build', '--runner', 'buf'], { ...process.env, PATH: path.dirname(process.execPath) });
  expect(forced.stderr).toContain('buf is not installed here');
});

test('svc pb build writes one FileDescriptorSet with imports, from a file protobufjs cannot parse', async () => {
  await mkdir(path.join(project, '.svc', 'bin'), { recursive: true });
  await symlink(buf, path.join(project, '.svc', 'bin', 'buf'));
  const r = await svc(['pb', 'build', '-o', 'gen/shop.binpb']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('wrote gen/shop.binpb with buf; list it under protos.descriptorSets');
  const set = fromBinary(FileDescriptorSetSchema, await readFile(path.join(project, 'gen', 'shop.binpb')));
  const names = set.file.map((f) => f.name);
  expect(names).toEqual(expect.arrayContaining(['shop/v1/shop.proto', 'google/protobuf/descriptor.proto', 'google/protobuf/timestamp.proto']));
  const shop = set.file.find((f) => f.name === 'shop/v1/shop.proto');
  expect(shop?.service[0]?.method[0]?.name).toBe('Get');
});
