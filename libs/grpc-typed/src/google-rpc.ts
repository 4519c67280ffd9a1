/**
 * google/rpc/status.proto and google/rpc/error_details.proto: the descriptors of
 * ./gen/google/rpc/*_pb.ts (protoc-gen-es's output, whose types the package exports), made on first
 * use. The generated modules decode their descriptors when evaluated, with protobuf-es loaded; the
 * package's index exports these stand-ins instead (lazy-object.ts), so that importing it, as every
 * untyped grpc entry does through @svcboot/entry-grpc, loads neither. The serialized files are the
 * generated ones (google-rpc.test.ts compares them).
 */
import type { Message } from '@bufbuild/protobuf';
import type { GenFile, GenMessage } from '@bufbuild/protobuf/codegenv2';
import type {
  ErrorInfo,
  RetryInfo,
  DebugInfo,
  QuotaFailure,
  QuotaFailure_Violation,
  PreconditionFailure,
  PreconditionFailure_Violation,
  BadRequest,
  BadRequest_FieldViolation,
  RequestInfo,
  ResourceInfo,
  Help,
  Help_Link,
  LocalizedMessage,
} from './gen/google/rpc/error_details_pb.js';
import type { Status } from './gen/google/rpc/status_pb.js';
import { lazyObject } from './lazy-object.js';
import { protobufCodegen, protobufWkt } from './protobuf-es.js';

/** google/rpc/status.proto, serialized (FileDescriptorProto, base64, as protoc-gen-es writes it). */
const STATUS_PROTO =
  'Chdnb29nbGUvcnBjL3N0YXR1cy5wcm90bxIKZ29vZ2xlLnJwYyJOCgZTdGF0dXMSDAoEY29kZRgBIAEoBRIPCgdtZX' +
  'NzYWdlGAIgASgJEiUKB2RldGFpbHMYAyADKAsyFC5nb29nbGUucHJvdG9idWYuQW55Ql4KDmNvbS5nb29nbGUucnBj' +
  'QgtTdGF0dXNQcm90b1ABWjdnb29nbGUuZ29sYW5nLm9yZy9nZW5wcm90by9nb29nbGVhcGlzL3JwYy9zdGF0dXM7c3' +
  'RhdHVzogIDUlBDYgZwcm90bzM';

/** google/rpc/error_details.proto, serialized. */
const ERROR_DETAILS_PROTO =
  'Ch5nb29nbGUvcnBjL2Vycm9yX2RldGFpbHMucHJvdG8SCmdvb2dsZS5ycGMikwEKCUVycm9ySW5mbxIOCgZyZWFzb2' +
  '4YASABKAkSDgoGZG9tYWluGAIgASgJEjUKCG1ldGFkYXRhGAMgAygLMiMuZ29vZ2xlLnJwYy5FcnJvckluZm8uTWV0' +
  'YWRhdGFFbnRyeRovCg1NZXRhZGF0YUVudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1ZRgCIAEoCToCOAEiOwoJUmV0cn' +
  'lJbmZvEi4KC3JldHJ5X2RlbGF5GAEgASgLMhkuZ29vZ2xlLnByb3RvYnVmLkR1cmF0aW9uIjIKCURlYnVnSW5mbxIV' +
  'Cg1zdGFja19lbnRyaWVzGAEgAygJEg4KBmRldGFpbBgCIAEoCSKPAwoMUXVvdGFGYWlsdXJlEjYKCnZpb2xhdGlvbn' +
  'MYASADKAsyIi5nb29nbGUucnBjLlF1b3RhRmFpbHVyZS5WaW9sYXRpb24axgIKCVZpb2xhdGlvbhIPCgdzdWJqZWN0' +
  'GAEgASgJEhMKC2Rlc2NyaXB0aW9uGAIgASgJEhMKC2FwaV9zZXJ2aWNlGAMgASgJEhQKDHF1b3RhX21ldHJpYxgEIA' +
  'EoCRIQCghxdW90YV9pZBgFIAEoCRJRChBxdW90YV9kaW1lbnNpb25zGAYgAygLMjcuZ29vZ2xlLnJwYy5RdW90YUZh' +
  'aWx1cmUuVmlvbGF0aW9uLlF1b3RhRGltZW5zaW9uc0VudHJ5EhMKC3F1b3RhX3ZhbHVlGAcgASgDEh8KEmZ1dHVyZV' +
  '9xdW90YV92YWx1ZRgIIAEoA0gAiAEBGjYKFFF1b3RhRGltZW5zaW9uc0VudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1' +
  'ZRgCIAEoCToCOAFCFQoTX2Z1dHVyZV9xdW90YV92YWx1ZSKVAQoTUHJlY29uZGl0aW9uRmFpbHVyZRI9Cgp2aW9sYX' +
  'Rpb25zGAEgAygLMikuZ29vZ2xlLnJwYy5QcmVjb25kaXRpb25GYWlsdXJlLlZpb2xhdGlvbho/CglWaW9sYXRpb24S' +
  'DAoEdHlwZRgBIAEoCRIPCgdzdWJqZWN0GAIgASgJEhMKC2Rlc2NyaXB0aW9uGAMgASgJIswBCgpCYWRSZXF1ZXN0Ej' +
  '8KEGZpZWxkX3Zpb2xhdGlvbnMYASADKAsyJS5nb29nbGUucnBjLkJhZFJlcXVlc3QuRmllbGRWaW9sYXRpb24afQoO' +
  'RmllbGRWaW9sYXRpb24SDQoFZmllbGQYASABKAkSEwoLZGVzY3JpcHRpb24YAiABKAkSDgoGcmVhc29uGAMgASgJEj' +
  'cKEWxvY2FsaXplZF9tZXNzYWdlGAQgASgLMhwuZ29vZ2xlLnJwYy5Mb2NhbGl6ZWRNZXNzYWdlIjcKC1JlcXVlc3RJ' +
  'bmZvEhIKCnJlcXVlc3RfaWQYASABKAkSFAoMc2VydmluZ19kYXRhGAIgASgJImAKDFJlc291cmNlSW5mbxIVCg1yZX' +
  'NvdXJjZV90eXBlGAEgASgJEhUKDXJlc291cmNlX25hbWUYAiABKAkSDQoFb3duZXIYAyABKAkSEwoLZGVzY3JpcHRp' +
  'b24YBCABKAkiVgoESGVscBIkCgVsaW5rcxgBIAMoCzIVLmdvb2dsZS5ycGMuSGVscC5MaW5rGigKBExpbmsSEwoLZG' +
  'VzY3JpcHRpb24YASABKAkSCwoDdXJsGAIgASgJIjMKEExvY2FsaXplZE1lc3NhZ2USDgoGbG9jYWxlGAEgASgJEg8K' +
  'B21lc3NhZ2UYAiABKAlCbAoOY29tLmdvb2dsZS5ycGNCEUVycm9yRGV0YWlsc1Byb3RvUAFaP2dvb2dsZS5nb2xhbm' +
  'cub3JnL2dlbnByb3RvL2dvb2dsZWFwaXMvcnBjL2VycmRldGFpbHM7ZXJyZGV0YWlsc6ICA1JQQ2IGcHJvdG8z';

interface GoogleRpc {
  status: GenFile;
  errorDetails: GenFile;
}

let files: GoogleRpc | undefined;

/** The two files' descriptors, decoded on the first call (protobuf-es loaded then). */
function googleRpcFiles(): GoogleRpc {
  if (files === undefined) {
    const { fileDesc } = protobufCodegen();
    const wkt = protobufWkt();
    files = {
      status: fileDesc(STATUS_PROTO, [wkt.file_google_protobuf_any]),
      errorDetails: fileDesc(ERROR_DETAILS_PROTO, [wkt.file_google_protobuf_duration]),
    };
  }
  return files;
}

/** A message of error_details.proto by its path of indexes (top level, then nested). */
function detailMessage<T extends Message>(index: number, nested?: number): GenMessage<T> {
  return lazyObject(() =>
    nested === undefined
      ? protobufCodegen().messageDesc(googleRpcFiles().errorDetails, index)
      : protobufCodegen().messageDesc(googleRpcFiles().errorDetails, index, nested),
  ) as GenMessage<T>;
}

/** Describes the file google/rpc/status.proto. */
export const file_google_rpc_status: GenFile = lazyObject(() => googleRpcFiles().status);

/** Describes the message google.rpc.Status. */
export const StatusSchema: GenMessage<Status> = lazyObject(() =>
  protobufCodegen().messageDesc(googleRpcFiles().status, 0),
) as GenMessage<Status>;

/** Describes the file google/rpc/error_details.proto. */
export const file_google_rpc_error_details: GenFile = lazyObject(
  () => googleRpcFiles().errorDetails,
);

/** Describes the message google.rpc.ErrorInfo. */
export const ErrorInfoSchema: GenMessage<ErrorInfo> = detailMessage<ErrorInfo>(0);

/** Describes the message google.rpc.RetryInfo. */
export const RetryInfoSchema: GenMessage<RetryInfo> = detailMessage<RetryInfo>(1);

/** Describes the message google.rpc.DebugInfo. */
export const DebugInfoSchema: GenMessage<DebugInfo> = detailMessage<DebugInfo>(2);

/** Describes the message google.rpc.QuotaFailure. */
export const QuotaFailureSchema: GenMessage<QuotaFailure> = detailMessage<QuotaFailure>(3);

/** Describes the message google.rpc.QuotaFailure.Violation. */
export const QuotaFailure_ViolationSchema: GenMessage<QuotaFailure_Violation> =
  detailMessage<QuotaFailure_Violation>(3, 0);

/** Describes the message google.rpc.PreconditionFailure. */
export const PreconditionFailureSchema: GenMessage<PreconditionFailure> =
  detailMessage<PreconditionFailure>(4);

/** Describes the message google.rpc.PreconditionFailure.Violation. */
export const PreconditionFailure_ViolationSchema: GenMessage<PreconditionFailure_Violation> =
  detailMessage<PreconditionFailure_Violation>(4, 0);

/** Describes the message google.rpc.BadRequest. */
export const BadRequestSchema: GenMessage<BadRequest> = detailMessage<BadRequest>(5);

/** Describes the message google.rpc.BadRequest.FieldViolation. */
export const BadRequest_FieldViolationSchema: GenMessage<BadRequest_FieldViolation> =
  detailMessage<BadRequest_FieldViolation>(5, 0);

/** Describes the message google.rpc.RequestInfo. */
export const RequestInfoSchema: GenMessage<RequestInfo> = detailMessage<RequestInfo>(6);

/** Describes the message google.rpc.ResourceInfo. */
export const ResourceInfoSchema: GenMessage<ResourceInfo> = detailMessage<ResourceInfo>(7);

/** Describes the message google.rpc.Help. */
export const HelpSchema: GenMessage<Help> = detailMessage<Help>(8);

/** Describes the message google.rpc.Help.Link. */
export const Help_LinkSchema: GenMessage<Help_Link> = detailMessage<Help_Link>(8, 0);

/** Describes the message google.rpc.LocalizedMessage. */
export const LocalizedMessageSchema: GenMessage<LocalizedMessage> =
  detailMessage<LocalizedMessage>(9);

export type {
  ErrorInfo,
  RetryInfo,
  DebugInfo,
  QuotaFailure,
  QuotaFailure_Violation,
  PreconditionFailure,
  PreconditionFailure_Violation,
  BadRequest,
  BadRequest_FieldViolation,
  RequestInfo,
  ResourceInfo,
  Help,
  Help_Link,
  LocalizedMessage,
} from './gen/google/rpc/error_details_pb.js';
export type { Status } from './gen/google/rpc/status_pb.js';
