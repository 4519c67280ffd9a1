import type { Metadata } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { WKT_WITH_JSON_MAPPING, messageToJson, type MarshalOptions } from './json.js';

/**
 * google.rpc.Status and the standard error details (google/rpc/status.proto,
 * google/rpc/error_details.proto), so an error's details render as JSON even when the user's
 * protos do not import them.
 */
const RPC_PROTO = `
syntax = "proto3";
package google.rpc;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
message RetryInfo { google.protobuf.Duration retry_delay = 1; }
message DebugInfo { repeated string stack_entries = 1; string detail = 2; }
message QuotaFailure {
  message Violation {
    string subject = 1; string description = 2; string api_service = 3; string quota_metric = 4;
    string quota_id = 5; map<string, string> quota_dimensions = 6; int64 quota_value = 7;
    optional int64 future_quota_value = 8;
  }
  repeated Violation violations = 1;
}
message PreconditionFailure {
  message Violation { string type = 1; string subject = 2; string description = 3; }
  repeated Violation violations = 1;
}
message BadRequest {
  message FieldViolation { string field = 1; string description = 2; string reason = 3; LocalizedMessage localized_message = 4; }
  repeated FieldViolation field_violations = 1;
}
message RequestInfo { string request_id = 1; string serving_data = 2; }
message ResourceInfo { string resource_type = 1; string resource_name = 2; string owner = 3; string description = 4; }
message Help {
  message Link { string description = 1; string url = 2; }
  repeated Link links = 1;
}
message LocalizedMessage { string locale = 1; string message = 2; }
`;

let rpcRoot: protobuf.Root | undefined;

/** The built-in root with google.rpc.* (and the google.protobuf types they use). */
export function rpcTypes(): protobuf.Root {
  if (!rpcRoot) {
    const root = new protobuf.Root();
    for (const file of ['google/protobuf/any.proto', 'google/protobuf/duration.proto']) {
      root.addJSON(
        (protobuf.common.get(file) as { nested: Record<string, protobuf.AnyNestedObject> }).nested,
      );
    }
    protobuf.parse(RPC_PROTO, root, { keepCase: true });
    root.resolveAll();
    rpcRoot = root;
  }
  return rpcRoot;
}

/** Finds a message type by full name (`google.rpc.BadRequest`) for an Any's type URL. */
export type TypeResolver = (fullName: string) => protobuf.Type | undefined;

/** An Any's type URL's message name: what follows the last `/`. */
function typeNameOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** Thrown when an Any's type is in no loaded proto: protojson cannot write it either. */
export class UnresolvableAny extends Error {}

/** A google.protobuf.Any (type_url, value bytes) as protojson writes it: `{"@type": url, …fields}`. */
export function anyToJson(
  typeUrl: string,
  value: Uint8Array,
  resolve: TypeResolver,
  o: MarshalOptions,
): Record<string, unknown> {
  const name = typeNameOf(typeUrl);
  const type = resolve(name) ?? (rpcTypes().lookup(name) as protobuf.Type | null) ?? undefined;
  if (!(type instanceof protobuf.Type))
    throw new UnresolvableAny(`unable to resolve ${JSON.stringify(typeUrl)}: not found`);
  const msg = type.decode(value) as unknown as Record<string, unknown>;
  const json = messageToJson(type, msg, o);
  if (WKT_WITH_JSON_MAPPING.has(name)) return { '@type': typeUrl, value: json };
  return { '@type': typeUrl, ...(json as Record<string, unknown>) };
}

/** A detail of a google.rpc.Status: a google.protobuf.Any, as protobufjs decodes it. */
export interface StatusDetail {
  type_url?: string;
  value?: Uint8Array;
}

/** The details of a google.rpc.Status's bytes (`grpc-status-details-bin`); none when they do not decode. */
export function statusDetailsOf(bin: Uint8Array): StatusDetail[] {
  const statusType = rpcTypes().lookupType('google.rpc.Status');
  try {
    return (statusType.decode(bin) as unknown as { details?: StatusDetail[] }).details ?? [];
  } catch {
    return [];
  }
}

/** The details of a google.rpc.Status carried in `grpc-status-details-bin`, as JSON Any values. */
export function detailsFromMetadata(
  md: Metadata | undefined,
  resolve: TypeResolver,
  o: MarshalOptions,
): unknown[] {
  if (!md) return [];
  const bin = md.get('grpc-status-details-bin')[0];
  if (bin === undefined || typeof bin === 'string') return [];
  return statusDetailsOf(bin).map((d) =>
    anyToJson(d.type_url ?? '', d.value ?? new Uint8Array(), resolve, o),
  );
}

/** grpc-status-details-bin for a status with details: what a handler puts in its error's metadata. */
export function encodeStatusDetails(
  code: number,
  message: string,
  details: ReadonlyArray<{ typeUrl: string; value: Uint8Array }>,
): Buffer {
  const statusType = rpcTypes().lookupType('google.rpc.Status');
  const bytes = statusType
    .encode(
      statusType.fromObject({
        code,
        message,
        details: details.map((d) => ({ type_url: d.typeUrl, value: d.value })),
      }),
    )
    .finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
