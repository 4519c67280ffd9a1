import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { protoCamelCase, safeObjectProperty } from '@bufbuild/protobuf/reflect';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { definitionOf } from '@svcboot/grpc-typed';
import { rootOfFiles } from '@svcboot/openapi';
import fc from 'fast-check';
import protobufjs from 'protobufjs';
import type protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';
import { descriptorsOf, rootFromDefinitions } from '../../grpc-server/src/descriptors.js';
import { fileDescriptorsOf } from '../../grpc-server/src/proto-file-descriptors.js';
import { type MarshalOptions, messageToJson } from '../../grpc-server/src/protojson/json.js';
import { flatJson } from './response-fast.js';
import { generatedFlatMessage, generatedFlatOf, generatedName } from './response-generated.js';

// The shortcut of Gateway.toJsonText for generated code (response-generated.ts) against the round
// trip it replaces: for values a protoc-gen-es handler may answer (protobuf-es messages and init
// objects, under the fields' generated names, odd values too), the flat JSON text is
// byte-identical to protojson of decode(responseSerialize(value)), the serializer being
// @svcboot/grpc-typed's (@bufbuild/protobuf's toBinary).
const PROTO = `
syntax = "proto3";
package gen.v1;
message Flat {
  string display_name = 1 [json_name = "label"]; bool on = 2; int32 i32 = 3; uint32 u32 = 4;
  sint32 s32 = 5; fixed32 f32 = 6; sfixed32 sf32 = 7; string note_text = 8; string x_2y = 9;
  int32 max__count = 10;
}
message Hello { string message = 1; }
message Nothing {}
message Nested { Hello hello = 1; }
message Listed { repeated string tags = 1; }
message Wide { int64 n = 1; }
message Maybe { optional string name = 1; }
message Picked { oneof pick { string a = 1; int32 b = 2; } }
service Gen {
  rpc GetFlat(Hello) returns (Flat);
  rpc GetHello(Hello) returns (Hello);
  rpc GetNothing(Hello) returns (Nothing);
  rpc GetNested(Hello) returns (Nested);
  rpc GetListed(Hello) returns (Listed);
  rpc GetWide(Hello) returns (Wide);
  rpc GetMaybe(Hello) returns (Maybe);
  rpc GetPicked(Hello) returns (Picked);
}
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'response-generated-'));
const file = path.join(dir, 'gen.proto');
writeFileSync(file, PROTO);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPTIONS: MarshalOptions[] = [
  { useProtoNames: false, emitUnpopulated: false, useEnumNumbers: false },
  { useProtoNames: true, emitUnpopulated: true, useEnumNumbers: true },
  { useProtoNames: false, emitUnpopulated: true, useEnumNumbers: false },
];

const protoLoaderDefinition = loadSync(file, { keepCase: true, includeDirs: [dir] })[
  'gen.v1.Gen'
] as unknown as ServiceDefinition;
// protoc's FileDescriptorProtos for the file (what generated code embeds), from its text.
const textRoot = new protobufjs.Root();
textRoot.resolvePath = (_origin, target) => path.resolve(dir, target);
textRoot.loadSync('gen.proto', { keepCase: true });
const registry = createFileRegistry(
  create(FileDescriptorSetSchema, { file: fileDescriptorsOf(textRoot, [dir], dir) }),
);
const service = registry.getService('gen.v1.Gen')!;
/** The definition generated code gives the entry: protobuf-es messages, grpc-typed's codec. */
const generated = definitionOf(service) as Record<string, MethodDefinition<unknown, unknown>>;
const outputOf = (method: string) => service.methods.find((m) => m.name === method)!.output;

/** protobuf-es's ScalarType numbers of the flat kinds (descriptor.proto's field types). */
const STRING = 9;
const BOOL = 8;
const UNSIGNED = new Set([7, 13]); // fixed32, uint32

/** Values a generated handler may answer for a field: mostly the expected ones, and odd ones. */
function valueArb(scalar: number): fc.Arbitrary<unknown> {
  const odd = fc.oneof(
    fc.constant('\ud800x'),
    fc.integer(),
    fc.double(),
    fc.constant(2 ** 32),
    fc.constant(null),
    fc.bigInt({ min: 0n, max: 10n }),
    fc.string(),
    fc.boolean(),
  );
  const expected =
    scalar === STRING
      ? fc.oneof(fc.string(), fc.string({ unit: 'binary' }))
      : scalar === BOOL
        ? fc.boolean()
        : UNSIGNED.has(scalar)
          ? fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constant(-0))
          : fc.oneof(fc.integer(), fc.constant(-0));
  return fc.oneof({ arbitrary: expected, weight: 12 }, { arbitrary: odd, weight: 1 });
}

/** An init object under the generated names, some fields missing, one property of no field. */
function initArb(desc: ReturnType<typeof outputOf>): fc.Arbitrary<Record<string, unknown>> {
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields)
    record[f.localName] = fc.option(valueArb(f.fieldKind === 'scalar' ? f.scalar : 0), {
      nil: undefined,
      freq: 4,
    });
  record['notAField'] = fc.option(fc.string(), { nil: undefined });
  return fc.record(record, { requiredKeys: [] });
}

describe.each([
  ['rootFromDefinitions (proto names)', () => rootFromDefinitions([protoLoaderDefinition])!],
  [
    'rootOfFiles (generated code)',
    () =>
      rootOfFiles(
        descriptorsOf(protoLoaderDefinition).map((bytes) => ({
          name: fromBinary(FileDescriptorProtoSchema, bytes).name,
          bytes,
          source: 'proto-loader',
        })),
        'test',
      ),
  ],
])('%s', (_name, build) => {
  const root: protobuf.Root = build();
  const typeOf = (method: string) => root.lookupType(outputOf(method).typeName);

  it('reads flat types of generated code only, and never a proto-loader definition', () => {
    for (const m of ['GetFlat', 'GetHello', 'GetNothing'])
      expect(generatedFlatOf(generated[m]!, typeOf(m), false), m).toBeDefined();
    // Nested, repeated, 64-bit, optional and oneof fields keep the round trip.
    for (const m of ['GetNested', 'GetListed', 'GetWide', 'GetMaybe', 'GetPicked'])
      expect(generatedFlatOf(generated[m]!, typeOf(m), false), m).toBeUndefined();
    const plain = protoLoaderDefinition as Record<string, MethodDefinition<unknown, unknown>>;
    expect(generatedFlatOf(plain['GetFlat']!, typeOf('GetFlat'), false)).toBeUndefined();
    // A serializer that takes other names than the generated ones: the probe refuses it.
    const otherNames = {
      ...generated['GetFlat']!,
      responseSerialize: (v: unknown) =>
        generated['GetFlat']!.responseSerialize({
          ...(v as object),
          noteText: (v as { displayName?: unknown }).displayName,
        }),
    };
    expect(generatedFlatOf(otherNames, typeOf('GetFlat'), false)).toBeUndefined();
  });

  it.each(['GetFlat', 'GetHello', 'GetNothing'])(
    '%s: the JSON text equals protojson of the round trip, for init objects and messages',
    (method) => {
      const type = typeOf(method);
      const d = generated[method]!;
      const desc = outputOf(method);
      let fast = 0;
      fc.assert(
        fc.property(initArb(desc), fc.boolean(), (init, asMessage) => {
          let value: unknown = init;
          if (asMessage) {
            try {
              value = create(desc, init as never);
            } catch {
              return;
            }
          }
          for (const o of OPTIONS) {
            const plan = generatedFlatOf(d, type, o.useProtoNames)!;
            let wire: string;
            try {
              wire = JSON.stringify(
                messageToJson(
                  type,
                  type.decode(d.responseSerialize(value)) as unknown as Record<string, unknown>,
                  o,
                ),
              );
            } catch {
              // The round trip fails (an odd value toBinary refuses): the shortcut must not answer.
              expect(generatedFlatMessage(plan, value)).toBeUndefined();
              continue;
            }
            const m = generatedFlatMessage(plan, value);
            if (!m) continue;
            fast++;
            expect(flatJson(plan.flat, m, o.emitUnpopulated)).toBe(wire);
          }
        }),
        { numRuns: 400 },
      );
      // The generated values do reach the shortcut, not only the round trip.
      expect(fast).toBeGreaterThan(30);
    },
  );
});

describe('generatedName', () => {
  it("is protobuf-es's property name for a field (localName)", () => {
    for (const name of [
      'display_name',
      'x_2y',
      'max__count',
      '_lead',
      'trail_',
      'a1_b',
      'toString',
    ])
      expect(generatedName(name), name).toBe(safeObjectProperty(protoCamelCase(name)));
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/), (name) => {
        expect(generatedName(name)).toBe(safeObjectProperty(protoCamelCase(name)));
      }),
      { numRuns: 500 },
    );
  });
});
