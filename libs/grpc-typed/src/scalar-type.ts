/**
 * protobuf-es's ScalarType (a field's scalar type: the numbers of descriptor.proto's
 * FieldDescriptorProto.Type), as constants of this package: binary.ts switches on them when it
 * compiles a decoder, and importing protobuf-es's enum would load protobuf-es with the package
 * (protobuf-es.ts).
 */
import type { ScalarType as ProtobufScalarType } from '@bufbuild/protobuf';

export type ScalarType = ProtobufScalarType;

export const ScalarType: {
  readonly DOUBLE: ProtobufScalarType.DOUBLE;
  readonly FLOAT: ProtobufScalarType.FLOAT;
  readonly INT64: ProtobufScalarType.INT64;
  readonly UINT64: ProtobufScalarType.UINT64;
  readonly INT32: ProtobufScalarType.INT32;
  readonly FIXED64: ProtobufScalarType.FIXED64;
  readonly FIXED32: ProtobufScalarType.FIXED32;
  readonly BOOL: ProtobufScalarType.BOOL;
  readonly STRING: ProtobufScalarType.STRING;
  readonly BYTES: ProtobufScalarType.BYTES;
  readonly UINT32: ProtobufScalarType.UINT32;
  readonly SFIXED32: ProtobufScalarType.SFIXED32;
  readonly SFIXED64: ProtobufScalarType.SFIXED64;
  readonly SINT32: ProtobufScalarType.SINT32;
  readonly SINT64: ProtobufScalarType.SINT64;
} = {
  DOUBLE: 1,
  FLOAT: 2,
  INT64: 3,
  UINT64: 4,
  INT32: 5,
  FIXED64: 6,
  FIXED32: 7,
  BOOL: 8,
  STRING: 9,
  BYTES: 12,
  UINT32: 13,
  SFIXED32: 15,
  SFIXED64: 16,
  SINT32: 17,
  SINT64: 18,
};

/** The wire type of a scalar's unpacked record: varint 0, 64-bit 1, length-delimited 2, 32-bit 5. */
export function wireTypeOf(type: ScalarType): number {
  switch (type) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return 2;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 1;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return 5;
    default:
      return 0;
  }
}
