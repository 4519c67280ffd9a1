import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyRequestOf } from './empty-request.js';

// The empty request of a GET without fields, copied instead of decoded per call: equal to what
// requestDeserialize gives for every proto-loader option set, and a fresh tree each call.
const PROTO = `
syntax = "proto3";
package empty.v1;
enum Kind { KIND_UNSPECIFIED = 0; ONE = 1; }
message Inner { string s = 1; }
message Req {
  string name = 1; int32 n = 2; int64 big = 3; bool flag = 4; bytes raw = 5; Kind kind = 6;
  repeated string tags = 7; map<string, int32> counts = 8; Inner inner = 9; double d = 10;
  oneof pick { string a = 11; int32 b = 12; }
  optional string maybe = 13;
}
message Flat { string name = 1; int32 n = 2; }
message Reply {}
service Empty { rpc Full(Req) returns (Reply); rpc Small(Flat) returns (Reply); }
`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'empty-request-'));
const file = path.join(dir, 'empty.proto');
writeFileSync(file, PROTO);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPTION_SETS: Options[] = [
  {},
  { keepCase: true },
  { defaults: true, longs: String, enums: String, bytes: String, oneofs: true, arrays: true },
  { defaults: true, longs: Number, bytes: Buffer, objects: true },
  { defaults: true },
];

describe.each(OPTION_SETS)('proto-loader options %j', (options) => {
  const pkg = loadSync(file, options);
  const definition = pkg['empty.v1.Empty'] as unknown as ServiceDefinition;
  const empty = Buffer.alloc(0);
  it.each(['Full', 'Small'])('%s: equal to a fresh deserialization, a new tree each call', (m) => {
    const def = (definition as Record<string, MethodDefinition<unknown, unknown>>)[m]!;
    const make = emptyRequestOf(def, empty);
    const a = make() as Record<string, unknown>;
    expect(a).toStrictEqual(def.requestDeserialize(empty));
    expect(Object.keys(a)).toEqual(Object.keys(def.requestDeserialize(empty) as object));
    for (const [k, v] of Object.entries(a)) if (v && typeof v === 'object') a[k] = 'mutated';
    a['added'] = 1;
    const b = make();
    expect(b).not.toBe(a);
    expect(b).toStrictEqual(def.requestDeserialize(empty));
  });
  it('copies (not decodes) unless the tree holds something other than plain values', () => {
    const def = (definition as Record<string, MethodDefinition<unknown, unknown>>)['Full']!;
    const hasLong = options.defaults === true && options.longs === undefined;
    expect(emptyRequestOf(def, empty).name).toMatch(hasLong ? /^deserialize$/ : /^copy/);
  });
});

it('another deserializer is called every time', () => {
  let calls = 0;
  const def = {
    requestDeserialize: () => ({ n: ++calls }),
  } as unknown as MethodDefinition<unknown, unknown>;
  const make = emptyRequestOf(def, Buffer.alloc(0));
  expect([make(), make()]).toEqual([{ n: 1 }, { n: 2 }]);
});
