import { grpcPortingRules } from './porting.js';
import {
  Phase,
  entryGetter,
  registerEntryKind,
  registerMiddleware,
  type EntryPlugin,
} from '@svcboot/entry-core';
import { GRPC_ENTRY_TYPE, GrpcEntry } from './entry.js';
import { grpcSchema, type GrpcEntryConfig } from './schema.js';
import { validateDefinition } from './typed/validate-middleware.js';

/** The `grpc` entry kind. */
export const grpcPlugin: EntryPlugin<GrpcEntryConfig, GrpcEntry> = {
  key: 'grpc',
  packageName: '@svcboot/entry-grpc',
  entryType: GRPC_ENTRY_TYPE,
  phase: Phase.Server,
  schema: grpcSchema,
  porting: grpcPortingRules,
  create: (config, ctx) => new GrpcEntry(config, ctx),
  reload: (entry, next, change) => entry.planReload(next, change),
};

registerEntryKind(grpcPlugin);
// `middleware.validate` (typed services' requests against their buf.validate rules).
registerMiddleware(validateDefinition);

/** `grpcEntry(app, 'greeter')`: the gRPC entry of that name, or an error naming what exists. */
export const grpcEntry = entryGetter(grpcPlugin);

export { GrpcEntry, GRPC_ENTRY_TYPE } from './entry.js';
export { grpcSchema, type GrpcEntryConfig } from './schema.js';
export { callContextOf } from './interceptor.js';
export { grpcTransport, grpcCallPayloads, GrpcServerMetrics } from './call-transport.js';
export { CODE_NAMES, codeName, httpStatusFromCode } from './codes.js';
export { compileTemplate, type PathTemplate } from './gateway/template.js';
export type { HttpBinding } from '@svcboot/openapi';
export { grpcErrors } from './errors.js';
export { DescriptorPool, type PoolFile } from './descriptor-pool.js';
export { Code, RpcError, detail, standardDetails, type ErrorDetail } from './typed/error.js';
export type {
  ServiceImpl,
  ServiceImplementationOf,
  TypedCallContext,
  TypedHandler,
} from './typed/types.js';
export {
  typedClient,
  type TypedCallOptions,
  type TypedClient,
  type TypedClientMethod,
  type TypedClientOptions,
} from './typed/client.js';
export { codecOf, definitionOf } from './typed/service.js';
export {
  validateDefinition,
  validateSchema,
  type ValidateConfig,
} from './typed/validate-middleware.js';
export * from './typed/gen/google/rpc/error_details_pb.js';
export {
  StatusSchema,
  type Status,
  file_google_rpc_status,
} from './typed/gen/google/rpc/status_pb.js';
