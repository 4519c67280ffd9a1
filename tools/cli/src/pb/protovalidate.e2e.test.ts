import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { equals, fromBinary } from '@bufbuild/protobuf';
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { file_buf_validate_validate } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import { bufBinary, plainEnv, run } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { main } from '../main.js';
import { scaffold } from '../scaffold/command.js';
import { protoString } from './proto-source.js';
import { VALIDATE_PROTO, vendorProtovalidate } from './protovalidate.js';
import { SOURCE_NODE_ARGS } from './test-support/served.js';

// protovalidate's buf/validate/validate.proto comes with svc (issue #40): `svc pb vendor` writes
// it from the descriptor @bufbuild/protovalidate embeds, so protos that use validation compile,
// lint and give OpenAPI documents with no buf.build dependency and no network.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const binTs = path.join(cliDir, 'src', 'bin.ts');
let tmp: string;

beforeAll(async () => {
  // Inside the workspace: the project resolves @svcboot/* and @bufbuild/* from it, as gen.test.ts's.
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  tmp = await mkdtemp(path.join(parent, 'protovalidate-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The file `name` of a FileDescriptorSet, without what a compiler adds beside the descriptor. */
function fileOf(set: Uint8Array, name: string): FileDescriptorProto {
  const file = fromBinary(FileDescriptorSetSchema, set).file.find((f) => f.name === name);
  if (!file) throw new Error(`${name} is not in the set`);
  file.sourceCodeInfo = undefined;
  return file;
}

test('the written validate.proto compiles (buf) to the very descriptor @bufbuild/protovalidate embeds', async () => {
  // Outside the workspace, with no package.json: svc's own copy of the package.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-protovalidate-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const written = await vendorProtovalidate(path.join(dir, 'vendored'), dir);
  expect(written.file).toBe(path.join(dir, 'vendored', VALIDATE_PROTO));
  expect(written.from).toBe('cli');
  const text = await readFile(written.file, 'utf8');
  expect(text).toMatch(/^\/\/ buf\/validate\/validate\.proto: protovalidate's rules/);
  expect(text).toContain('Licensed under the Apache License, Version 2.0');
  expect(text).toContain('package buf.validate;');

  await writeFile(path.join(dir, 'buf.yaml'), 'version: v2\nmodules:\n  - path: vendored\n');
  const out = path.join(dir, 'set.binpb');
  await run(await bufBinary(), ['build', '-o', out], { cwd: dir });
  const compiled = fileOf(await readFile(out), VALIDATE_PROTO);
  const embedded = file_buf_validate_validate.proto;
  expect(compiled.messageType.map((m) => m.name)).toEqual(embedded.messageType.map((m) => m.name));
  // Every message, field, oneof, option (the CEL rules included), range and extension.
  expect(equals(FileDescriptorProtoSchema, compiled, embedded)).toBe(true);
});

test('string literals survive quotes, backslashes, control and non-ASCII characters', () => {
  expect(protoString('a"b\\c\nd\te')).toBe('"a\\"b\\\\c\\nd\\te"');
  // é is two UTF-8 bytes, written as octal escapes protoc reads back as those bytes.
  expect(protoString('é\u0001')).toBe('"\\303\\251\\001"');
});

test('a service proto with validation rules: svc pb vendor, lint, and gen with its OpenAPI step, all offline', async () => {
  const project = await scaffold({
    name: 'validated',
    features: ['grpc'],
    parent: tmp,
    svcbootVersion: '*',
    tarballs: undefined,
    vendor: false,
  });
  const bin = path.join(project, '.svc', 'bin');
  const code = await main(
    ['install', 'protoc-gen-es', '--dir', bin],
    () => {},
    (l) => console.error(l),
  );
  expect(code).toBe(0);
  await symlink(await bufBinary(), path.join(bin, 'buf'));
  const proto = path.join(project, 'api', 'v1', 'greeter.proto');
  const source = await readFile(proto, 'utf8');
  await writeFile(
    proto,
    source
      .replace('package api.v1;\n', 'package api.v1;\n\nimport "buf/validate/validate.proto";\n')
      .replace(
        '  string message = 1;',
        '  string message = 1 [(buf.validate.field).string = {min_len: 2, max_len: 40}];',
      ),
  );
  // npm may use only its cache and any connection fails: nothing may come from the network.
  const env = plainEnv({
    npm_config_offline: 'true',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
  });
  const svc = (args: readonly string[]) =>
    run(process.execPath, [...SOURCE_NODE_ARGS, binTs, ...args], { cwd: project, env });

  const vendored = await svc(['pb', 'vendor']);
  expect(vendored.stdout).toContain('wrote third-party/googleapis/google/api/annotations.proto');
  // The project resolves the workspace's @bufbuild/protovalidate: the project's copy is used.
  expect(vendored.stdout).toMatch(
    /wrote third-party\/googleapis\/buf\/validate\/validate\.proto \(from @bufbuild\/protovalidate \d+\.\d+\.\d+, the project's\)/,
  );
  expect((await svc(['pb', 'lint'])).stdout).toContain('buf lint: no problems');
  const gen = await svc(['pb', 'gen']);
  expect(gen.stdout).toContain('generated code with buf');
  expect(gen.stdout).toContain('wrote gen/openapi/greeter.openapi.json');
  const generated = await readFile(path.join(project, 'src', 'gen', 'v1', 'greeter_pb.ts'), 'utf8');
  expect(generated).toContain('file_buf_validate_validate');

  // `svc pb gen` wrote the documents as `svc pb openapi` does (the same step).
  expect(gen.stdout).toContain('wrote gen/openapi/greeter.swagger.json');
  const doc = JSON.parse(
    await readFile(path.join(project, 'gen', 'openapi', 'greeter.openapi.json'), 'utf8'),
  ) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
  expect(doc.components.schemas['api.v1.HelloResponse']?.properties['message']).toEqual(
    expect.objectContaining({ type: 'string', minLength: 2, maxLength: 40 }),
  );
}, 240_000);
