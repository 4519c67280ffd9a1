import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';
import { rootFromDefinitions } from '../../grpc-server/src/descriptors.js';
import { type MarshalOptions, messageToJson } from '../../grpc-server/src/protojson/json.js';
import { fastMessage, flatFieldsOf, flatJson, planOf, responsePlanOf } from './response-fast.js';

// The shortcut of Gateway.toJson (response-fast.ts) against the round trip it replaces: for
// generated values of several response types, protojson of fromObject's message (when the
// shortcut takes the value) is byte-identical to protojson of decode(responseSerialize(value)).
const PROTO = `
syntax = "proto3";
package fast.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/empty.proto";
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; GREEN = 2; BLUE_ISH = 5; }
message Scalars {
  double d = 1; int32 i32 = 2; uint32 u32 = 3; sint32 s32 = 4; fixed32 f32 = 5; sfixed32 sf32 = 6;
  int64 i64 = 7; uint64 u64 = 8; sint64 s64 = 9; fixed64 f64 = 10; sfixed64 sf64 = 11;
  bool b = 12; string str = 13; bytes raw = 14; Color color = 15;
  optional string maybe_name = 16; optional int64 maybe_count = 17;
}
message Tree {
  string display_name = 1 [json_name = "label"];
  repeated Tree children = 2;
  repeated Color colors = 3;
  repeated string tags = 4;
  repeated bytes blobs = 5;
  repeated int64 ids = 6;
  Scalars leaf = 7;
  repeated double weights = 8;
}
message Floaty { float f = 1; }
message Mapped { map<string, int32> counts = 1; }
message OneOf { oneof pick { string a = 1; int32 b = 2; } }
message Stamped { google.protobuf.Timestamp at = 1; }
message Hello { string message = 1; }
message Flat {
  string display_name = 1 [json_name = "label"]; bool on = 2; int32 i32 = 3; uint32 u32 = 4;
  sint32 s32 = 5; fixed32 f32 = 6; sfixed32 sf32 = 7; string note_text = 8;
}
message OptionalFlat { optional string name = 1; }
service Fast {
  rpc GetScalars(Hello) returns (Scalars);
  rpc GetTree(Hello) returns (Tree);
  rpc GetFloaty(Hello) returns (Floaty);
  rpc GetMapped(Hello) returns (Mapped);
  rpc GetOneOf(Hello) returns (OneOf);
  rpc GetStamped(Hello) returns (Stamped);
  rpc GetEmpty(Hello) returns (google.protobuf.Empty);
  rpc GetHello(Hello) returns (Hello);
  rpc GetFlat(Hello) returns (Flat);
  rpc GetOptionalFlat(Hello) returns (OptionalFlat);
}
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'response-fast-'));
const file = path.join(dir, 'fast.proto');
writeFileSync(file, PROTO);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPTIONS: MarshalOptions[] = [
  { useProtoNames: false, emitUnpopulated: false, useEnumNumbers: false },
  { useProtoNames: true, emitUnpopulated: true, useEnumNumbers: true },
  { useProtoNames: false, emitUnpopulated: true, useEnumNumbers: false },
];

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** Values a handler may return for a field: the expected ones and the odd ones. */
function valueArb(field: protobuf.Field, depth: number): fc.Arbitrary<unknown> {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return messageArb(rt, depth - 1);
  if (rt instanceof protobuf.Enum) {
    return fc.oneof(
      fc.constantFrom(...Object.keys(rt.values)),
      fc.constantFrom(...Object.values(rt.values)),
      fc.integer(),
      fc.double(),
      fc.constant(2 ** 33),
      fc.string(),
    );
  }
  if (field.type === 'string')
    return fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.integer(),
      fc.constant('\ud800x'),
    );
  if (field.type === 'bytes')
    return fc.oneof(
      fc.uint8Array().map((u) => Buffer.from(u)),
      fc.uint8Array(),
      fc.base64String(),
      fc.array(fc.integer({ min: -2, max: 300 }), { maxLength: 4 }),
    );
  if (field.type === 'bool') return fc.oneof(fc.boolean(), fc.integer(), fc.string());
  if (INT64.has(field.type))
    return fc.oneof(
      fc.bigInt(-(2n ** 63n), 2n ** 64n - 1n).map(String),
      fc.maxSafeInteger(),
      fc.double({ min: -1e18, max: 1e18, noNaN: true }),
      fc.constant('12abc'),
    );
  return fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 40), fc.constant(-0), fc.string());
}

function messageArb(type: protobuf.Type, depth: number): fc.Arbitrary<unknown> {
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of type.fieldsArray) {
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Type && depth <= 0) continue;
    const one = valueArb(field, depth);
    record[field.name] = fc.option(field.repeated ? fc.array(one, { maxLength: 3 }) : one, {
      nil: undefined,
    });
  }
  // A handler may return properties the message does not have.
  record['not_a_field'] = fc.option(fc.string(), { nil: undefined });
  return fc.record(record, { requiredKeys: [] });
}

/** protojson of what `f` gives, or the error it throws. */
function outcome(f: () => Record<string, unknown>, type: protobuf.Type, o: MarshalOptions) {
  try {
    return { json: JSON.stringify(messageToJson(type, f(), o)) };
  } catch (err) {
    return { error: String(err) };
  }
}

describe.each([true, false])('proto-loader keepCase: %s', (keepCase) => {
  const pkg = loadSync(file, { keepCase, includeDirs: [dir] });
  const definition = pkg['fast.v1.Fast'] as unknown as ServiceDefinition;
  const root = rootFromDefinitions([definition])!;
  const def = (name: string) =>
    (definition as Record<string, MethodDefinition<unknown, unknown>>)[name]!;

  it('takes the shortcut only for types whose every field survives the wire unchanged', () => {
    for (const name of ['Scalars', 'Tree', 'Hello'])
      expect(planOf(root.lookupType(`fast.v1.${name}`)), name).toBeDefined();
    for (const name of ['Floaty', 'Mapped', 'OneOf', 'Stamped'])
      expect(planOf(root.lookupType(`fast.v1.${name}`)), name).toBeUndefined();
    expect(planOf(root.lookupType('google.protobuf.Empty'))).toBeDefined();
    expect(planOf(root.lookupType('google.protobuf.Timestamp'))).toBeUndefined();
    for (const m of ['GetScalars', 'GetTree', 'GetEmpty', 'GetHello'])
      expect(responsePlanOf(def(m), root.lookupType(fullTypeOf(m))), m).toBeDefined();
    for (const m of ['GetFloaty', 'GetMapped', 'GetOneOf', 'GetStamped'])
      expect(responsePlanOf(def(m), root.lookupType(fullTypeOf(m))), m).toBeUndefined();
    // A serializer that is not proto-loader's keeps the round trip.
    const custom = {
      ...def('GetHello'),
      responseSerialize: (v: unknown) => def('GetHello').responseSerialize(v),
    };
    expect(responsePlanOf(custom, root.lookupType('fast.v1.Hello'))).toBeUndefined();
  });

  function fullTypeOf(method: string): string {
    const t = (def(method) as unknown as { responseType: { type: { name: string } } }).responseType
      .type.name;
    return t === 'Empty' ? 'google.protobuf.Empty' : `fast.v1.${t}`;
  }

  it.each(['GetScalars', 'GetTree', 'GetHello'])(
    '%s: protojson of the shortcut equals protojson of the round trip',
    (method) => {
      const type = root.lookupType(fullTypeOf(method));
      const d = def(method);
      const plan = responsePlanOf(d, type)!;
      expect(plan).toBeDefined();
      let fast = 0;
      fc.assert(
        fc.property(messageArb(type, 3), (value) => {
          let m: Record<string, unknown> | undefined;
          try {
            m = fastMessage(plan, value);
          } catch {
            m = undefined;
          }
          if (m) fast++;
          const wire = () =>
            type.decode(d.responseSerialize(value)) as unknown as Record<string, unknown>;
          for (const o of OPTIONS) {
            const expected = outcome(wire, type, o);
            const got = outcome(() => fastMessage(plan, value) ?? wire(), type, o);
            expect(got).toEqual(expected);
          }
        }),
        { numRuns: 300 },
      );
      // The generated values do reach the shortcut, not only the round trip.
      expect(fast).toBeGreaterThan(10);
    },
  );

  it('writes the JSON text of flat types only: singular strings, bools and 32-bit integers', () => {
    const plan = (name: string) => planOf(root.lookupType(`fast.v1.${name}`))!;
    for (const useProtoNames of [false, true]) {
      expect(flatFieldsOf(plan('Flat'), useProtoNames)?.length).toBe(8);
      expect(flatFieldsOf(plan('Hello'), useProtoNames)?.length).toBe(1);
      // double, int64, bytes, enum, optional; repeated and nested; optional; an index-like name.
      for (const name of ['Scalars', 'Tree', 'OptionalFlat'])
        expect(flatFieldsOf(plan(name), useProtoNames), name).toBeUndefined();
    }
    // A JSON name that is an array index: an object writes it first, whatever the field order.
    const indexed = protobuf
      .parse('syntax = "proto3"; message Ix { string a = 1; string b = 2 [json_name = "7"]; }')
      .root.lookupType('Ix');
    expect(JSON.stringify(messageToJson(indexed, { a: 'x', b: 'y' }, OPTIONS[0]!))).toBe(
      '{"7":"y","a":"x"}',
    );
    expect(flatFieldsOf(planOf(indexed)!, false)).toBeUndefined();
    expect(flatFieldsOf(planOf(indexed)!, true)?.length).toBe(2);
    expect(flatFieldsOf(planOf(root.lookupType('google.protobuf.Empty'))!, false)).toEqual([]);
  });

  it.each(['GetFlat', 'GetHello', 'GetEmpty'])(
    '%s: the flat JSON text equals JSON.stringify of protojson of the round trip',
    (method) => {
      const type = root.lookupType(fullTypeOf(method));
      const d = def(method);
      const plan = responsePlanOf(d, type)!;
      let fast = 0;
      fc.assert(
        fc.property(messageArb(type, 1), (value) => {
          const m = fastMessage(plan, value);
          if (!m) return;
          fast++;
          const wire = type.decode(d.responseSerialize(value)) as unknown as Record<
            string,
            unknown
          >;
          for (const o of OPTIONS) {
            const flat = flatFieldsOf(plan, o.useProtoNames)!;
            expect(flatJson(flat, m, o.emitUnpopulated)).toBe(
              JSON.stringify(messageToJson(type, wire, o)),
            );
          }
        }),
        { numRuns: 300 },
      );
      expect(fast).toBeGreaterThan(10);
    },
  );

  it('a plain reply with well-formed strings takes the shortcut; a lone surrogate does not', () => {
    const plan = responsePlanOf(def('GetHello'), root.lookupType('fast.v1.Hello'))!;
    expect(fastMessage(plan, { message: 'Hello, world \u{1f600}' })).toBeDefined();
    expect(fastMessage(plan, { message: 'half \ud83d' })).toBeUndefined();
  });
});
