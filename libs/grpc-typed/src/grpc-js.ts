/**
 * @grpc/grpc-js in two parts. `Metadata` and the status codes, which every gRPC path uses from its
 * start, come from the package's own modules for them: its index loads the whole client and
 * server (channels, resolvers, load balancers, channelz), ~25 ms of a one-entry app's start that
 * serves gRPC natively and makes no client. The rest is loaded on first use, synchronously
 * (`grpcJs()`): a client's channel, the `server: grpc-js` server. The classes are the index's own
 * (it re-exports these modules), so `instanceof Metadata` holds for either import.
 *
 * The package has no "exports" map, so its build files are reachable by path; `grpc-js.test.ts`
 * fails if an upgrade moves them.
 */
import { createRequire } from 'node:module';

export { Metadata } from '@grpc/grpc-js/build/src/metadata.js';
export { Status as status } from '@grpc/grpc-js/build/src/constants.js';

type GrpcJs = typeof import('@grpc/grpc-js');
let loaded: GrpcJs | undefined;

/** The whole of @grpc/grpc-js, loaded on the first call. */
export function grpcJs(): GrpcJs {
  loaded ??= createRequire(import.meta.url)('@grpc/grpc-js') as GrpcJs;
  return loaded;
}
