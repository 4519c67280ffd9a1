/**
 * fast-check arbitraries of protobuf-es values for the codec's tests (codec.test.ts,
 * message-encoder.test.ts): random init shapes of a message type, scalars as protobuf-es holds them.
 */
import { type DescField, type DescMessage, ScalarType } from '@bufbuild/protobuf';
import fc from 'fast-check';

/** Random values of a scalar type, as protobuf-es holds them. */
export function scalarArb(type: ScalarType, longAsString = false): fc.Arbitrary<unknown> {
  const long = (a: fc.Arbitrary<bigint>) => (longAsString ? a.map(String) : a);
  switch (type) {
    case ScalarType.DOUBLE:
      return fc.double();
    case ScalarType.FLOAT:
      return fc.float();
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return long(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return long(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }));
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
      return fc.integer();
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.integer({ min: 0, max: 0xffffffff });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.STRING:
      // Lone surrogates too: both codecs write them as U+FFFD.
      return fc.oneof(fc.string(), fc.string({ unit: 'binary' }));
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 40 });
  }
}

export const enumArb = fc.constantFrom(0, 1, 2, 7, -3);

export function mapKeyArb(type: ScalarType): fc.Arbitrary<string> {
  return type === ScalarType.STRING ? fc.string() : scalarArb(type).map((k) => String(k));
}

/** Random init shapes of `desc` (nested messages down to `depth` 0). */
export function messageArb(
  desc: DescMessage,
  depth: number,
): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, fc.Arbitrary<unknown>> = {};
  const singularArb = (f: DescField): fc.Arbitrary<unknown> | undefined => {
    switch (f.fieldKind) {
      case 'scalar':
        return scalarArb(f.scalar, f.longAsString);
      case 'enum':
        return enumArb;
      case 'message':
        return depth > 0 ? messageArb(f.message, depth - 1) : undefined;
      default:
        return undefined;
    }
  };
  for (const member of desc.members) {
    if (member.kind === 'oneof') {
      const cases = member.fields.flatMap((f) => {
        const a = singularArb(f);
        return a ? [a.map((value) => ({ case: f.localName, value }))] : [];
      });
      props[member.localName] = fc.oneof(fc.constant({ case: undefined }), ...cases);
      continue;
    }
    const f = member;
    switch (f.fieldKind) {
      case 'list': {
        const elem =
          f.listKind === 'message'
            ? depth > 0
              ? messageArb(f.message, depth - 1)
              : undefined
            : f.listKind === 'enum'
              ? enumArb
              : scalarArb(f.scalar, f.longAsString);
        if (elem) props[f.localName] = fc.array(elem, { maxLength: 4 });
        break;
      }
      case 'map': {
        const value =
          f.mapKind === 'message'
            ? depth > 0
              ? messageArb(f.message, depth - 1)
              : undefined
            : f.mapKind === 'enum'
              ? enumArb
              : scalarArb(f.scalar);
        if (value) props[f.localName] = fc.dictionary(mapKeyArb(f.mapKey), value, { maxKeys: 3 });
        break;
      }
      default: {
        const a = singularArb(f);
        if (a) props[f.localName] = fc.option(a, { nil: undefined });
      }
    }
  }
  return fc.record(props, { requiredKeys: [] });
}
