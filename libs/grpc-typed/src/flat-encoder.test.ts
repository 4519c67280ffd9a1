import {
  create,
  createFileRegistry,
  type DescMessage,
  fromJson,
  isMessage,
  type JsonValue,
  ScalarType,
  toBinary,
} from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codecOf } from './codec.js';
import { flatEncoder } from './flat-encoder.js';

// flat-encoder.ts against @bufbuild/protobuf's toBinary (after create() for an init object): the
// same bytes for every value it encodes, and no answer where toBinary throws.
const scalar = (name: string, number: number, type: string, extra: JsonValue = {}) => ({
  name,
  number,
  label: 'LABEL_OPTIONAL',
  type,
  jsonName: name,
  ...(extra as object),
});
const file = (syntax: string, messages: JsonValue[]): JsonValue => ({
  name: `flat/v1/${syntax}.proto`,
  package: `flat.v1.${syntax}`,
  syntax,
  messageType: messages,
  enumType: [
    {
      name: 'Color',
      value: [
        { name: 'COLOR_UNSPECIFIED', number: 0 },
        { name: 'RED', number: 1 },
        { name: 'BLUE', number: 7 },
      ],
    },
  ],
});
const FLAT = {
  name: 'Flat',
  field: [
    // Declared out of number order: the bytes follow the numbers, as toBinary's.
    scalar('note', 9, 'TYPE_STRING'),
    scalar('on', 2, 'TYPE_BOOL'),
    scalar('i32', 3, 'TYPE_INT32'),
    scalar('u32', 4, 'TYPE_UINT32'),
    scalar('s32', 5, 'TYPE_SINT32'),
    scalar('f32', 6, 'TYPE_FIXED32'),
    scalar('sf32', 7, 'TYPE_SFIXED32'),
    scalar('d', 8, 'TYPE_DOUBLE'),
    scalar('name', 1, 'TYPE_STRING'),
    scalar('f', 10, 'TYPE_FLOAT'),
    scalar('raw', 11, 'TYPE_BYTES'),
    scalar('color', 12, 'TYPE_ENUM', { typeName: '.flat.v1.proto3.Color' }),
    scalar('far', 536870911, 'TYPE_INT32'),
  ],
};
const NOT_FLAT = [
  { name: 'Wide', field: [scalar('n', 1, 'TYPE_INT64')] },
  { name: 'Listed', field: [scalar('tags', 1, 'TYPE_STRING', { label: 'LABEL_REPEATED' })] },
  {
    name: 'Nested',
    field: [scalar('flat', 1, 'TYPE_MESSAGE', { typeName: '.flat.v1.proto3.Flat' })],
  },
  {
    name: 'Maybe',
    field: [scalar('name', 1, 'TYPE_STRING', { proto3Optional: true, oneofIndex: 0 })],
    oneofDecl: [{ name: '_name' }],
  },
  {
    name: 'Picked',
    field: [
      scalar('a', 1, 'TYPE_STRING', { oneofIndex: 0 }),
      scalar('b', 2, 'TYPE_INT32', { oneofIndex: 0 }),
    ],
    oneofDecl: [{ name: 'pick' }],
  },
];
const registry = createFileRegistry(
  fromJson(FileDescriptorProtoSchema, file('proto3', [FLAT, ...NOT_FLAT])),
  () => undefined,
);
const proto2 = createFileRegistry(
  fromJson(FileDescriptorProtoSchema, file('proto2', [{ ...FLAT, field: FLAT.field.slice(0, 3) }])),
  () => undefined,
);
const Flat = registry.getMessage('flat.v1.proto3.Flat')!;

/** Mostly what a handler answers for a field, now and then something toBinary refuses or takes otherwise. */
function valueArb(type: ScalarType | 'enum'): fc.Arbitrary<unknown> {
  const expected = (() => {
    switch (type) {
      case ScalarType.STRING:
        return fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constant(''));
      case ScalarType.BOOL:
        return fc.boolean();
      case ScalarType.UINT32:
      case ScalarType.FIXED32:
        return fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constant(0xffffffff));
      case ScalarType.DOUBLE:
        return fc.oneof(fc.double(), fc.constant(-0));
      case ScalarType.FLOAT:
        return fc.oneof(fc.float(), fc.double(), fc.constant(-0));
      case ScalarType.BYTES:
        return fc.oneof(
          fc.uint8Array(),
          fc.uint8Array().map((u) => Buffer.from(u)),
        );
      case 'enum':
        return fc.oneof(fc.constantFrom(0, 1, 7), fc.integer());
      default:
        return fc.oneof(fc.integer(), fc.constantFrom(-1, -(2 ** 31), 2 ** 31 - 1, -0, 127, 128));
    }
  })();
  const odd = fc.oneof(
    fc.constant('\ud800x'),
    fc.constant(null),
    fc.constant(2 ** 32),
    fc.double(),
    fc.string(),
    fc.bigInt({ min: -5n, max: 5n }),
    fc.boolean(),
    fc.constant([1, 2]),
  );
  return fc.oneof({ arbitrary: expected, weight: 10 }, { arbitrary: odd, weight: 1 });
}

function initArb(desc: DescMessage): fc.Arbitrary<Record<string, unknown>> {
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields)
    record[f.localName] = fc.option(
      valueArb(f.fieldKind === 'enum' ? 'enum' : f.fieldKind === 'scalar' ? f.scalar : 'enum'),
      { nil: undefined, freq: 3 },
    );
  record['notAField'] = fc.option(fc.string(), { nil: undefined });
  return fc.record(record, { requiredKeys: [] });
}

/** toBinary's bytes for `value` (an init object or a message), or the error it throws. */
function reference(value: Record<string, unknown>): { bytes?: Buffer; error?: string } {
  try {
    const message = isMessage(value, Flat) ? value : create(Flat, value as never);
    return { bytes: Buffer.from(toBinary(Flat, message as never)) };
  } catch (err) {
    return { error: String(err) };
  }
}

describe('flatEncoder', () => {
  it('takes proto3 messages of singular scalars and enums only', () => {
    expect(flatEncoder(Flat)).toBeDefined();
    for (const name of ['Wide', 'Listed', 'Nested', 'Maybe', 'Picked'])
      expect(flatEncoder(registry.getMessage(`flat.v1.proto3.${name}`)!), name).toBeUndefined();
    expect(flatEncoder(proto2.getMessage('flat.v1.proto2.Flat')!)).toBeUndefined();
  });

  it("writes toBinary's bytes for init objects and messages, and leaves it what it refuses", () => {
    const encode = flatEncoder(Flat)!;
    let encoded = 0;
    fc.assert(
      fc.property(initArb(Flat), fc.boolean(), (init, asMessage) => {
        let value: Record<string, unknown> = init;
        if (asMessage) {
          try {
            value = create(Flat, init as never) as unknown as Record<string, unknown>;
          } catch {
            return;
          }
        }
        const ref = reference(value);
        const got = encode(value);
        if (ref.error !== undefined) {
          expect(got, ref.error).toBeUndefined();
          return;
        }
        if (got === undefined) return;
        encoded++;
        expect(got.toString('hex')).toBe(ref.bytes!.toString('hex'));
      }),
      { numRuns: 1000 },
    );
    // The generated values do reach the encoder, not only toBinary.
    expect(encoded).toBeGreaterThan(200);
  });

  it('leaves a message of another type, and one with unknown fields, to toBinary', () => {
    const encode = flatEncoder(Flat)!;
    expect(encode({ $typeName: 'flat.v1.proto3.Wide', name: 'x' })).toBeUndefined();
    expect(encode({ ...create(Flat, { name: 'x' }), $unknown: [] })).toBeUndefined();
    expect(encode(create(Flat, { name: 'x' }) as never)?.toString('hex')).toBe('0a0178');
  });

  it("the typed codec's serialize gives toBinary's bytes, through the encoder or not", () => {
    const { serialize } = codecOf(Flat);
    fc.assert(
      fc.property(initArb(Flat), (init) => {
        const ref = reference(init);
        if (ref.error !== undefined) expect(() => serialize(init as never)).toThrow();
        else expect(serialize(init as never).toString('hex')).toBe(ref.bytes!.toString('hex'));
      }),
      { numRuns: 300 },
    );
  });
});
