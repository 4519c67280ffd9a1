import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, type DescMessage, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { codecOf } from './codec.js';
import { messageArb } from './test-support/arbitraries.js';
import {
  DocSchema,
  ItemSchema,
  MapsSchema,
  RepeatedSchema,
  ScalarsSchema,
} from './test-support/gen/codec/v1/codec_pb.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env['CODEC_RUNS'] ?? 300);

/** The protobufjs types of the same proto: the untyped path's codec. */
const root = protobuf.loadSync(path.join(here, 'test-support/proto/codec/v1/codec.proto'));

/** What the untyped path makes of `bytes`: protobufjs decodes and encodes them again. */
function untypedRoundTrip(desc: DescMessage, bytes: Uint8Array): Uint8Array {
  const type = root.lookupType(desc.typeName);
  return type.encode(type.decode(bytes)).finish();
}

/**
 * Maps protobufjs does not write back as it read them: 64-bit keys (kept as hashes, written in
 * another order) and bool keys (read as the strings "true" / "false", written as `true` both: what
 * grpc-server's map-keys.ts works around for proto-loader services).
 */
function withoutLongKeys(m: Record<string, unknown>): Record<string, unknown> {
  const strip = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    if (o['$typeName'] === 'codec.v1.Maps') {
      o['mInt64String'] = {};
      o['mSint64Double'] = {};
      o['mBoolEnum'] = {};
    }
    for (const x of Object.values(o)) if (typeof x === 'object') strip(x);
  };
  strip(m);
  return m;
}

describe('codecOf: the compiled decoder against @bufbuild/protobuf, the bytes against protobufjs', () => {
  for (const desc of [ScalarsSchema, RepeatedSchema, MapsSchema, DocSchema] as DescMessage[]) {
    const codec = codecOf(desc);
    it(`${desc.typeName}: the same bytes as toBinary, the same message as fromBinary`, () => {
      fc.assert(
        fc.property(messageArb(desc, 2), (init) => {
          const message = create(desc, init);
          const bytes = codec.serialize(message as never);
          expect(Buffer.isBuffer(bytes)).toBe(true);
          expect(new Uint8Array(bytes)).toEqual(toBinary(desc, message));
          expect(codec.deserialize(bytes)).toEqual(fromBinary(desc, bytes));
          const plain = new Uint8Array(bytes);
          expect(codec.deserialize(plain as Buffer)).toEqual(fromBinary(desc, plain));
          // An init shape (no $typeName) is encoded as create() makes it.
          expect(codec.serialize(init as never)).toEqual(bytes);
        }),
        { numRuns: RUNS },
      );
    });
    it(`${desc.typeName}: protobufjs (the untyped codec) reads and writes the same bytes`, () => {
      fc.assert(
        fc.property(messageArb(desc, 2), (init) => {
          const message = withoutLongKeys(create(desc, init) as Record<string, unknown>);
          const bytes = codec.serialize(message as never);
          expect(Buffer.from(untypedRoundTrip(desc, bytes))).toEqual(bytes);
        }),
        { numRuns: RUNS },
      );
    });
  }

  it('decodes as fromBinary does (or fails as it does) on any bytes: unknown fields, other wire types, garbage', () => {
    const doc = codecOf(DocSchema);
    const item = codecOf(ItemSchema);
    const outcome = (f: () => unknown): unknown => {
      try {
        return { ok: f() };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          messageArb(DocSchema, 1).map((init) => toBinary(DocSchema, create(DocSchema, init))),
          // A valid Doc with one byte changed, or cut short.
          fc
            .tuple(
              messageArb(DocSchema, 1),
              fc.nat(),
              fc.integer({ min: 0, max: 255 }),
              fc.boolean(),
            )
            .map(([init, at, byte, cut]) => {
              const b = toBinary(DocSchema, create(DocSchema, init));
              if (b.length === 0) return b;
              if (cut) return b.subarray(0, at % b.length);
              b[at % b.length] = byte;
              return b;
            }),
        ),
        (raw) => {
          const bytes = Buffer.from(raw);
          expect(outcome(() => doc.deserialize(bytes))).toEqual(
            outcome(() => fromBinary(DocSchema, bytes)),
          );
          // A Doc's bytes read as an Item: unknown fields and mismatched wire types.
          expect(outcome(() => item.deserialize(bytes))).toEqual(
            outcome(() => fromBinary(ItemSchema, bytes)),
          );
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('writes unknown fields back and reads a repeated singular message field as a merge, as protobuf-es', () => {
    const doc = codecOf(DocSchema);
    const item = codecOf(ItemSchema);
    const full = create(DocSchema, {
      id: 'd',
      meta: { author: 'a', counts: { x: 1 } },
      items: [{ name: 'n', tags: ['t'] }],
    });
    const bytes = doc.serialize(full);
    // Doc's fields 11–13 are unknown to Item (fields 1–8).
    const docBytes = doc.serialize(
      create(DocSchema, { id: 'n', state: 2, comment: 'c', ratio: 0.5 }),
    );
    const asItem = item.deserialize(docBytes);
    expect(asItem.$unknown?.length).toBeGreaterThan(0);
    expect(asItem).toEqual(fromBinary(ItemSchema, docBytes));
    expect(item.serialize(asItem)).toEqual(Buffer.from(toBinary(ItemSchema, asItem)));
    // meta twice: the second merges into the first.
    const twice = Buffer.concat([
      bytes,
      Buffer.from(toBinary(DocSchema, create(DocSchema, { meta: { created: 5n } }))),
    ]);
    expect(doc.deserialize(twice)).toEqual(fromBinary(DocSchema, twice));
    expect(doc.deserialize(twice).meta).toMatchObject({ author: 'a', created: 5n });
  });

  it('gives bytes fields as views of what it was given, a Buffer or a Uint8Array, as fromBinary', () => {
    const doc = codecOf(DocSchema);
    const bytes = doc.serialize(create(DocSchema, { blob: new Uint8Array([1, 2, 3]) }));
    const plain = new Uint8Array(bytes);
    expect(Buffer.isBuffer(doc.deserialize(bytes).blob)).toBe(true);
    const fromPlain = doc.deserialize(plain as Buffer).blob;
    expect(Buffer.isBuffer(fromPlain)).toBe(false);
    expect(fromPlain).toEqual(fromBinary(DocSchema, plain).blob);
  });

  it('raises protobuf-es errors for values it cannot encode', () => {
    const scalars = codecOf(ScalarsSchema);
    const bad = create(ScalarsSchema);
    (bad as unknown as Record<string, unknown>)['fInt32'] = 1.5;
    expect(() => scalars.serialize(bad)).toThrow(/int32/);
  });
});
