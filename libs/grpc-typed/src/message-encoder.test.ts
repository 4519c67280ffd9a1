import { create, type DescMessage, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageEncoder } from './message-encoder.js';
import {
  DocSchema,
  MapsSchema,
  OptionalsSchema,
  RepeatedSchema,
  ScalarsSchema,
} from './test-support/gen/codec/v1/codec_pb.js';
import { messageArb } from './test-support/arbitraries.js';

// message-encoder.ts against @bufbuild/protobuf's toBinary: the same bytes for every value it
// encodes (messages and init objects of the codec test's types: lists, maps, oneofs, nested
// messages, 64-bit integers, explicit presence), and no answer where toBinary throws.
const RUNS = Number(process.env['CODEC_RUNS'] ?? 300);
const TYPES = [
  ScalarsSchema,
  OptionalsSchema,
  RepeatedSchema,
  MapsSchema,
  DocSchema,
] as DescMessage[];

/** toBinary's bytes (hex) for an init object or a message, or the error it throws. */
function reference(desc: DescMessage, value: unknown, asMessage: boolean): string | Error {
  try {
    const message = asMessage ? value : create(desc, value as never);
    return Buffer.from(toBinary(desc, message as never)).toString('hex');
  } catch (err) {
    return err as Error;
  }
}

describe('messageEncoder', () => {
  for (const desc of TYPES) {
    it(`${desc.typeName}: toBinary's bytes for init objects and messages`, () => {
      const encode = messageEncoder(desc)!;
      expect(encode).toBeDefined();
      let encoded = 0;
      fc.assert(
        fc.property(messageArb(desc, 2), fc.boolean(), (init, asMessage) => {
          const value = asMessage ? create(desc, init as never) : init;
          const ref = reference(desc, value, asMessage);
          const got = encode(value as Record<string, unknown>);
          if (ref instanceof Error) {
            expect(got, ref.message).toBeUndefined();
            return;
          }
          if (got === undefined) return;
          encoded++;
          expect(got.toString('hex')).toBe(ref);
        }),
        { numRuns: RUNS },
      );
      // The random messages do reach the encoder, not only toBinary.
      expect(encoded).toBeGreaterThan(RUNS / 2);
    });
  }

  it('leaves to toBinary what it does not take as toBinary would', () => {
    const doc = messageEncoder(DocSchema)!;
    const scalars = messageEncoder(ScalarsSchema)!;
    // A message of another type, unknown fields, null, a 64-bit integer as a number or a string.
    expect(doc({ $typeName: 'codec.v1.Maps' })).toBeUndefined();
    expect(doc({ ...create(DocSchema), $unknown: [] })).toBeUndefined();
    expect(scalars({ fString: null })).toBeUndefined();
    expect(scalars({ fInt64: 5 })).toBeUndefined();
    expect(scalars({ fInt64: '5' })).toBeUndefined();
    expect(scalars({ fInt32: 2 ** 31 })).toBeUndefined();
    // Map keys toBinary would read otherwise ("07" is 7 for it): its bytes, not a guess.
    const maps = messageEncoder(MapsSchema)!;
    expect(maps({ mInt32Int64: { '07': 1n } })).toBeUndefined();
    expect(maps({ mInt32Int64: { '7': 1n } })?.toString('hex')).toBe(
      Buffer.from(toBinary(MapsSchema, create(MapsSchema, { mInt32Int64: { 7: 1n } }))).toString(
        'hex',
      ),
    );
  });

  it("writes a oneof's member at its zero value, and an explicit-presence field at its zero value", () => {
    const doc = messageEncoder(DocSchema)!;
    for (const init of [
      { kind: { case: 'number', value: 0 } },
      { kind: { case: 'note', value: '' } },
      { comment: '' },
    ]) {
      const ref = Buffer.from(toBinary(DocSchema, create(DocSchema, init as never))).toString(
        'hex',
      );
      expect(ref).not.toBe('');
      expect(doc(init as never)?.toString('hex')).toBe(ref);
    }
  });

  it('writes strings as UTF-8: Latin-1, astral and lone surrogates too, short and long', () => {
    const doc = messageEncoder(DocSchema)!;
    for (const id of [
      '',
      'a',
      'caf\u00e9',
      '\u0080',
      '\u00ff\u0100',
      '\u{1f600}',
      'x\ud800',
      'é'.repeat(200),
      'a'.repeat(127),
      'a'.repeat(128),
    ]) {
      const ref = Buffer.from(toBinary(DocSchema, create(DocSchema, { id }))).toString('hex');
      expect(doc({ id } as never)?.toString('hex'), JSON.stringify(id)).toBe(ref);
    }
  });

  it('writes a nested message of 128 bytes and more with its length as the shortest varint', () => {
    const doc = messageEncoder(DocSchema)!;
    const init = { items: [{ tags: Array.from({ length: 60 }, (_, i) => `tag-${i}`) }] };
    expect(doc(init as never)?.toString('hex')).toBe(
      Buffer.from(toBinary(DocSchema, create(DocSchema, init as never))).toString('hex'),
    );
  });
});
