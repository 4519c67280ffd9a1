/**
 * @grpc/grpc-js in two parts. `Metadata` and the status codes, which every gRPC path uses from its
 * start, come from the package's own modules for them: its index loads the whole client and
 * server (channels, resolvers, load balancers, channelz), ~25 ms of a one-entry app's start that
 * serves gRPC natively and makes no client. The rest is loaded on first use, synchronously
 * (`grpcJs()`): a client's channel, the `server: grpc-js` server. The classes are the index's own
 * (it re-exports these modules), so `instanceof Metadata` holds for either import.
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

/** `Metadata` and the codes from their own modules, or from the index where those are not found. */
export function partsOf(load: (id: string) => unknown): GrpcJsParts {
  try {
    const { Metadata } = load(METADATA_MODULE) as Partial<Pick<GrpcJs, 'Metadata'>>;
    const { Status } = load(STATUS_MODULE) as { Status?: Partial<GrpcJs['status']> };
    if (typeof Metadata === 'function' && typeof Status?.RESOURCE_EXHAUSTED === 'number')
      return { Metadata, status: Status as GrpcJs['status'] };
  } catch {
    // Moved or renamed by an upgrade: the index has them.
  }
  const index = load('@grpc/grpc-js') as GrpcJs;
  return { Metadata: index.Metadata, status: index.status };
}

const requireHere = createRequire(import.meta.url);
const parts = partsOf(requireHere);

/**
 * @grpc/grpc-js's `Metadata` class (the index's own: an instance of either is one of the other).
 * Public declarations name the type from '@grpc/grpc-js'.
 */
export const Metadata: typeof GrpcJsIndex.Metadata = parts.Metadata;
/** @grpc/grpc-js's `Metadata`. */
export type Metadata = GrpcJsIndex.Metadata;
/** gRPC's status codes: @grpc/grpc-js's `status`. */
export const status: typeof GrpcJsIndex.status = parts.status;
/** A gRPC status code: @grpc/grpc-js's `status`. */
export type status = GrpcJsIndex.status;

/** The whole of @grpc/grpc-js, loaded on the first call. */
export const grpcJs: () => GrpcJs = lazyModule(() => import.meta.resolve('@grpc/grpc-js'));
