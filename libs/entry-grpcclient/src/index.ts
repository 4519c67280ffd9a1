import { Phase, entryGetter, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { registerTracedClient } from '@svcboot/entry-core/toolkit';
import { grpcClientTracing } from './client-span.js';
import { GRPC_CLIENT_ENTRY_TYPE, GrpcClientEntry } from './entry.js';
import { grpcClientSchema, type GrpcClientConfig } from './schema.js';

/**
 * The `grpcclient` entry kind. Connector phase: bootstrapped before the servers whose handlers
 * use it, and closed after they drained.
 */
export const grpcClientPlugin: EntryPlugin<GrpcClientConfig, GrpcClientEntry> = {
  key: 'grpcclient',
  packageName: '@svcboot/entry-grpcclient',
  entryType: GRPC_CLIENT_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: grpcClientSchema,
  create: (config, ctx) => new GrpcClientEntry(config, ctx),
};

registerEntryKind(grpcClientPlugin);
// Outbound calls get client spans once an entry traces: @svcboot/middleware-trace hands its tracer
// provider over (it knows this package by name; neither imports the other).
registerTracedClient('@svcboot/entry-grpcclient', grpcClientTracing);

/** `grpcClient(app, 'users')`: the `grpcclient` entry of that name, or an error naming the ones there are. */
export const grpcClient = entryGetter(grpcClientPlugin);

export { GrpcClientEntry, GRPC_CLIENT_ENTRY_TYPE, type PlainClientClass } from './entry.js';
export { grpcClientSchema, STATUS_NAMES, type GrpcClientConfig } from './schema.js';
export { grpcClientErrorCatalogue } from './errors.js';
// The breaker and the propagation rules are entry-core's (shared with entry-httpclient).
export type { InboundCall } from '@svcboot/entry-core';
export {
  AdaptiveBreaker,
  outboundDeadline,
  type BreakerOptions,
  type BreakerState,
  type PropagationOptions,
} from '@svcboot/entry-core/call';
export { ClientSpanMiddleware, grpcClientTracing } from './client-span.js';
export { GrpcClientMetrics } from './metrics.js';
export { injectTraceContext } from './trace-headers.js';
export { parseTarget, type ChannelTarget } from './target.js';
export { serviceConfigOf } from './service-config.js';
