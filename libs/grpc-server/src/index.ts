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
export { CODE_NAMES, codeName, httpStatusFromCode } from './codes.js';
export { grpcErrors } from './errors.js';
export { DescriptorPool, type PoolFile } from './descriptor-pool.js';
// Typed services and clients, RpcError and google.rpc's details, codecs, the call record's payloads:
// @svcboot/grpc-typed's (a client installs it without the server), under the names they had here.
export {
  Code,
  RpcError,
  codecOf,
  definitionOf,
  detail,
  GrpcServerMetrics,
  grpcCallPayloads,
  grpcTransport,
  standardDetails,
  typedClient,
  type ErrorDetail,
  type ServiceImpl,
  type ServiceImplementationOf,
  type TypedCallContext,
  type TypedCallOptions,
  type TypedClient,
  type TypedClientMethod,
  type TypedClientOptions,
  type TypedHandler,
} from '@svcboot/grpc-typed';
export {
  validateDefinition,
  validateSchema,
  type ValidateConfig,
} from './typed/validate-middleware.js';
// google.rpc's error details and Status (generated), as grpc-typed exports them.
export {
  file_google_rpc_error_details,
  type ErrorInfo,
  ErrorInfoSchema,
  type RetryInfo,
  RetryInfoSchema,
  type DebugInfo,
  DebugInfoSchema,
  type QuotaFailure,
  QuotaFailureSchema,
  type QuotaFailure_Violation,
  QuotaFailure_ViolationSchema,
  type PreconditionFailure,
  PreconditionFailureSchema,
  type PreconditionFailure_Violation,
  PreconditionFailure_ViolationSchema,
  type BadRequest,
  BadRequestSchema,
  type BadRequest_FieldViolation,
  BadRequest_FieldViolationSchema,
  type RequestInfo,
  RequestInfoSchema,
  type ResourceInfo,
  ResourceInfoSchema,
  type Help,
  HelpSchema,
  type Help_Link,
  Help_LinkSchema,
  type LocalizedMessage,
  LocalizedMessageSchema,
  StatusSchema,
  type Status,
  file_google_rpc_status,
} from '@svcboot/grpc-typed';
