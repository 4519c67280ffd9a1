/**
 * @bufbuild/protobuf, resolved from this package and loaded on first use (grpc-typed's
 * protobuf-es.ts says why): the descriptor pool and the .proto files' descriptors use it when
 * reflection, the gateway or a typed service needs them, not when an untyped entry starts.
 */
import type * as Protobuf from '@bufbuild/protobuf';
import type * as Wire from '@bufbuild/protobuf/wire';
import type * as Wkt from '@bufbuild/protobuf/wkt';
import { lazyModule } from '@svcboot/grpc-typed/internal/protobuf-es';

/** `@bufbuild/protobuf`. */
export const protobufEs: () => typeof Protobuf = lazyModule(() =>
  import.meta.resolve('@bufbuild/protobuf'),
);
/** `@bufbuild/protobuf/wkt`. */
export const protobufWkt: () => typeof Wkt = lazyModule(() =>
  import.meta.resolve('@bufbuild/protobuf/wkt'),
);
/** `@bufbuild/protobuf/wire`. */
export const protobufWire: () => typeof Wire = lazyModule(() =>
  import.meta.resolve('@bufbuild/protobuf/wire'),
);
