import type { CompressionConfig } from '@svcboot/entry-core/toolkit';
import type { MarshalOptions } from '@svcboot/grpc-server/protocol';
import type { GatewayErrorModel } from '@svcboot/grpc-server/protocol';

export interface GatewayOptions {
  marshal: MarshalOptions;
  indent: string;
  discardUnknown: boolean;
  svcStyle: boolean;
  maxBodyBytes: number;
  /** How deeply request JSON (bodies, streamed messages) may nest objects and arrays; 400 beyond. Default 100. */
  maxJsonDepth?: number;
  /** The most query parameters (and form fields) a request may have; 400 beyond. Default 1000. */
  maxQueryParams?: number;
  /** A path bound only for other methods: 405 with `Allow` instead of grpc-gateway's 501 (code 12). */
  methodNotAllowed405?: boolean;
  /** grpc-gateway's WithDisablePathLengthFallback: no POST (form) → GET fallback. */
  disablePathLengthFallback?: boolean;
  /** grpc-gateway's WithDisableHTTPMethodOverride: `X-HTTP-Method-Override` ignored. */
  disableHttpMethodOverride?: boolean;
  /** protoc-gen-grpc-gateway's allow_patch_feature: a PATCH fills its FieldMask from the body's keys. */
  allowPatchFeature?: boolean;
  /** The error body: grpc-gateway's google.rpc.Status (default), or entry-core's google/amazon models. */
  errorModel?: GatewayErrorModel;
  /** Server-sent events: a comment line every this many ms on an open event stream; 0: none. Default 15000. */
  sseHeartbeatMs?: number;
  /** The most bytes a multipart/form-data upload may have (413 beyond); default `maxBodyBytes`. */
  maxUploadBytes?: number;
  /** Compression of unary responses (entry-core's `compression` options); off when absent. */
  compression?: CompressionConfig;
}
