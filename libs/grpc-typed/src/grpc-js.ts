/**
 * @grpc/grpc-js in parts. The status codes, which every gRPC path uses from its start, come from
 * the package's module for them; `Metadata` from its own module on first use (`metadataClass()`:
 * that module loads grpc-js's logging and errors, ~6 ms of a start that has served no call yet);
 * its index loads the whole client and server (channels, resolvers, load balancers, channelz),
 * ~25 ms of a one-entry app's start that serves gRPC natively and makes no client. The rest is
 * loaded on first use, synchronously (`grpcJs()`): a client's channel, the `server: grpc-js`
 * server. The classes are the index's own (it re-exports these modules), so `instanceof Metadata`
 * holds for either import.
 *
 * The package has no "exports" map, so its build files are reachable by path; should an upgrade
 * move them, the index is loaded instead (`partsOf`), and `grpc-js.test.ts` fails in CI.
 */
import { createRequire } from 'node:module';
import type * as GrpcJsIndex from '@grpc/grpc-js';
import { lazyModule } from './protobuf-es.js';

type GrpcJs = typeof GrpcJsIndex;
/** What a start needs of grpc-js. */
export interface GrpcJsParts {
  readonly Metadata: GrpcJs['Metadata'];
  readonly status: GrpcJs['status'];
}

/** The module files of `Metadata` and the status codes (grpc-js 1.x). */
export const METADATA_MODULE = '@grpc/grpc-js/build/src/metadata.js';
export const STATUS_MODULE = '@grpc/grpc-js/build/src/constants.js';

/** `Metadata` from its own module, or from the index where it is not found. */
export function metadataOf(load: (id: string) => unknown): GrpcJs['Metadata'] {
  try {
    const { Metadata } = load(METADATA_MODULE) as Partial<Pick<GrpcJs, 'Metadata'>>;
    if (typeof Metadata === 'function') return Metadata;
  } catch {
    // Moved or renamed by an upgrade: the index has it.
  }
  return (load('@grpc/grpc-js') as GrpcJs).Metadata;
}

/** The status codes from their own module, or from the index where it is not found. */
export function statusOf(load: (id: string) => unknown): GrpcJs['status'] {
  try {
    const { Status } = load(STATUS_MODULE) as { Status?: Partial<GrpcJs['status']> };
    if (typeof Status?.RESOURCE_EXHAUSTED === 'number') return Status as GrpcJs['status'];
  } catch {
    // Moved or renamed by an upgrade: the index has them.
  }
  return (load('@grpc/grpc-js') as GrpcJs).status;
}

/** Both parts, `Metadata` first (each from its own module, or from the index). */
export function partsOf(load: (id: string) => unknown): GrpcJsParts {
  return { Metadata: metadataOf(load), status: statusOf(load) };
}

const requireHere = createRequire(import.meta.url);

let metadata: GrpcJs['Metadata'] | undefined;
/**
 * @grpc/grpc-js's `Metadata` class (the index's own: an instance of either is one of the other),
 * its module loaded on the first call. Public declarations name the type from '@grpc/grpc-js'.
 */
export function metadataClass(): typeof GrpcJsIndex.Metadata {
  metadata ??= metadataOf(requireHere);
  return metadata;
}
/** @grpc/grpc-js's `Metadata`. */
export type Metadata = GrpcJsIndex.Metadata;
/** gRPC's status codes: @grpc/grpc-js's `status`. */
export const status: typeof GrpcJsIndex.status = statusOf(requireHere);
/** A gRPC status code: @grpc/grpc-js's `status`. */
export type status = GrpcJsIndex.status;

/** The whole of @grpc/grpc-js, loaded on the first call. */
export const grpcJs: () => GrpcJs = lazyModule(() => import.meta.resolve('@grpc/grpc-js'));
