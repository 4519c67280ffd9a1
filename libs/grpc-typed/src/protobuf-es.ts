/**
 * @bufbuild/protobuf, loaded on first use. An untyped service (a grpc entry serving .proto files)
 * never uses protobuf-es, yet every module that names it in an `import` line loads its 66 modules
 * (~50 ms of CPU and ~6 MiB at start) when the package's index is imported. The modules a start
 * evaluates import only its types and reach its values through these functions, which load the
 * ES module synchronously (`require` of the ES file: the same module instance an `import` of it
 * gives, so descriptors and messages made by generated code work with it unchanged).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Protobuf from '@bufbuild/protobuf';
import type * as Codegen from '@bufbuild/protobuf/codegenv2';
import type * as Wire from '@bufbuild/protobuf/wire';
import type * as Wkt from '@bufbuild/protobuf/wkt';

/**
 * A function giving the module at the URL `resolve` answers (the caller's
 * `() => import.meta.resolve(specifier)`, so that the package resolves from the caller's
 * folder), loaded on its first call: an ES module as below, a CommonJS one (grpc-js.ts) as
 * `require` loads it anywhere.
 */
export function lazyModule<T>(resolve: () => string): () => T {
  let loaded: T | undefined;
  return () => {
    // `require` of an ES file (Node >= 20.19) evaluates it in the ES loader's module map, or
    // returns it from there: the instance an `import` of the same file gives.
    loaded ??= createRequire(import.meta.url)(fileURLToPath(resolve())) as T;
    return loaded;
  };
}

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
/** `@bufbuild/protobuf/codegenv2`. */
export const protobufCodegen: () => typeof Codegen = lazyModule(() =>
  import.meta.resolve('@bufbuild/protobuf/codegenv2'),
);
