import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProtoRoot } from '@svcboot/openapi';
import {
  JsonInputError,
  jsonToPlain,
  messageToJson,
} from '../../grpc-server/src/protojson/json.js';
import { populate } from './params.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'json-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  path.join(dir, 'all.proto'),
  `syntax = "proto3";
package j.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/field_mask.proto";
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }
message Inner { string some_name = 1; }
message All {
  int32 i32 = 1; int64 i64 = 2; uint64 u64 = 3; double d = 4; float f = 5; bool b = 6; string s = 7; bytes by = 8;
  Color color = 9; Inner inner = 10; repeated Inner inners = 11; map<string, int64> counts = 12;
  google.protobuf.Timestamp ts = 13; google.protobuf.Duration dur = 14; google.protobuf.Struct st = 15;
  google.protobuf.Int32Value wi = 16; google.protobuf.FieldMask mask = 17; google.protobuf.Value v = 18;
  oneof choice { string pick_a = 19; int32 pick_b = 20; }
  string snake_case_field = 21;
}`,
);
const root = loadProtoRoot(['all.proto'], [dir], dir);
const All = root.lookupType('j.v1.All');
const opts = { useProtoNames: false, emitUnpopulated: false, useEnumNumbers: false };

function roundTrip(json: unknown): unknown {
  const msg = All.decode(
    All.encode(All.fromObject(jsonToPlain(All, json, false) as Record<string, unknown>)).finish(),
  );
  return messageToJson(All, msg as unknown as Record<string, unknown>, opts);
}

describe('proto3 canonical JSON', () => {
  it('round-trips every kind of field the way protojson writes it', () => {
    const json = {
      i32: -5,
      i64: '-9007199254740993',
      u64: '18446744073709551615',
      d: 1.5,
      f: 'Infinity',
      b: true,
      s: 'x',
      by: Buffer.from('hey').toString('base64'),
      color: 'RED',
      inner: { someName: 'n' },
      inners: [{ someName: 'a' }, {}],
      counts: { a: '3' },
      ts: '2024-02-29T12:00:00.123Z',
      dur: '1.500s',
      st: { a: 1, b: [true, null, 'x'], c: { d: 'e' } },
      wi: 0,
      mask: 'someName,inner.someName',
      v: 'text',
      pickB: 7,
      snakeCaseField: 'y',
    };
    expect(roundTrip(json)).toEqual({ ...json, inners: [{ someName: 'a' }, {}] });
  });

  it('accepts proto names and numbers for enums and int64, and omits defaults unless asked', () => {
    const plain = jsonToPlain(All, { snake_case_field: 'z', color: 1, i64: 12 }, false) as Record<
      string,
      unknown
    >;
    const msg = All.decode(All.encode(All.fromObject(plain)).finish()) as unknown as Record<
      string,
      unknown
    >;
    expect(messageToJson(All, msg, opts)).toEqual({ snakeCaseField: 'z', color: 'RED', i64: '12' });
    const full = messageToJson(All, msg, {
      useProtoNames: true,
      emitUnpopulated: true,
      useEnumNumbers: true,
    }) as Record<string, unknown>;
    expect(full).toMatchObject({
      snake_case_field: 'z',
      color: 1,
      i32: 0,
      s: '',
      inner: null,
      inners: [],
      counts: {},
      b: false,
    });
    expect(full).not.toHaveProperty('pick_a');
  });

  it('rejects unknown fields (unless discarding) and wrong types with the field path', () => {
    expect(() => jsonToPlain(All, { nope: 1 }, false)).toThrow(JsonInputError);
    expect(jsonToPlain(All, { nope: 1 }, true)).toEqual({});
    expect(() => jsonToPlain(All, { inner: { someName: 5 } }, false)).toThrow(
      /inner.someName: expected a string/,
    );
    expect(() => jsonToPlain(All, { i32: 1.5 }, false)).toThrow(/i32: expected an integer/);
    expect(() => jsonToPlain(All, { i32: 2 ** 31 }, false)).toThrow(/out of range/);
    expect(() => jsonToPlain(All, { color: 'BLUE' }, false)).toThrow(
      /not a value of enum j.v1.Color/,
    );
    expect(() => jsonToPlain(All, { ts: 'yesterday' }, false)).toThrow(/RFC 3339/);
    expect(() => jsonToPlain(All, { u64: '-1' }, false)).toThrow(/non-negative/);
  });

  it('sets nested and repeated fields from URL text, typed by the field (params.populate, runtime/query.go rules)', () => {
    const json: Record<string, unknown> = {};
    populate(All, json, ['inner', 'some_name'], ['q']);
    populate(All, json, ['b'], ['true']);
    populate(All, json, ['i32'], ['42']);
    populate(All, json, ['wi'], ['9']);
    expect(json).toEqual({ inner: { some_name: 'q' }, b: true, i32: 42, wi: 9 });
    expect(() => populate(All, {}, ['b'], ['yes'])).toThrow(
      /strconv.ParseBool: parsing "yes": invalid syntax/,
    );
    expect(() => populate(All, {}, ['inner'], ['x'])).toThrow(/unsupported message type/);
  });
});
