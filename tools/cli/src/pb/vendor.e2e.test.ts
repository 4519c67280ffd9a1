import { readFile, readdir, rm, mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { GOOGLEAPIS_FILES, vendorGoogleapis } from './vendor.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-vendor-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

test('vendors the six googleapis protos a gateway-annotated service imports, from npm, and nothing else', async () => {
  const out = path.join(root, 'third-party', 'googleapis');
  const written = await vendorGoogleapis(out);
  expect(written).toEqual(GOOGLEAPIS_FILES.map((f) => path.join(out, f)));
  expect(GOOGLEAPIS_FILES).toEqual([
    'google/api/annotations.proto',
    'google/api/http.proto',
    'google/api/httpbody.proto',
    'google/rpc/code.proto',
    'google/rpc/error_details.proto',
    'google/rpc/status.proto',
  ]);
  expect(await readFile(path.join(out, 'google/api/annotations.proto'), 'utf8')).toMatch(
    /package google\.api;[\s\S]*extend google\.protobuf\.MethodOptions/,
  );
  expect(await readFile(path.join(out, 'google/rpc/status.proto'), 'utf8')).toMatch(
    /message Status \{/,
  );
  expect((await readdir(path.join(out, 'google'))).sort()).toEqual(['api', 'rpc']);
  // The staging folder is gone.
  expect(await readdir(path.join(root, 'third-party'))).toEqual(['googleapis']);
});

test('an unknown package version fails and writes nothing', async () => {
  const parent = path.join(root, 'bad');
  await mkdir(parent, { recursive: true });
  await writeFile(path.join(parent, 'keep.txt'), 'x');
  await expect(vendorGoogleapis(path.join(parent, 'googleapis'), '0.0.0-nope')).rejects.toThrow(
    /npm pack google-proto-files@0\.0\.0-nope/,
  );
  expect(await readdir(parent)).toEqual(['keep.txt']);
});
