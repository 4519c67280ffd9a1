import type { Metadata } from '@grpc/grpc-js';
import { metadataClass, status as Code } from './grpc-js.js';
import type { DescMessage, MessageShape, MessageInitShape, Registry } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import {
  markUpstreamFailure,
  upstreamFailureOf,
} from '@svcboot/entry-core/internal/call/upstream-failure';
import {
  BadRequestSchema,
  DebugInfoSchema,
  ErrorInfoSchema,
  HelpSchema,
  LocalizedMessageSchema,
  PreconditionFailureSchema,
  QuotaFailureSchema,
  RequestInfoSchema,
  ResourceInfoSchema,
  RetryInfoSchema,
  StatusSchema,
} from './google-rpc.js';
import { lazyObject } from './lazy-object.js';
import { protobufEs, protobufWkt } from './protobuf-es.js';

export { Code };

/** One error detail: a message and its generated schema (`{ desc: BadRequestSchema, value: {...} }`). */
export interface ErrorDetail<Desc extends DescMessage = DescMessage> {
  desc: Desc;
  value: MessageInitShape<Desc>;
}

/** A detail for an RpcError, typed by its schema: `detail(BadRequestSchema, { fieldViolations: [...] })`. */
export function detail<Desc extends DescMessage>(
  desc: Desc,
  value: MessageInitShape<Desc>,
): ErrorDetail<Desc> {
  return { desc, value };
}

/**
 * google.rpc's standard error details (google/rpc/error_details.proto), for reading details back
 * (made on first use, as the schemas are: google-rpc.ts).
 */
export const standardDetails: Registry = lazyObject(() =>
  protobufEs().createRegistry(
    BadRequestSchema,
    DebugInfoSchema,
    ErrorInfoSchema,
    HelpSchema,
    LocalizedMessageSchema,
    PreconditionFailureSchema,
    QuotaFailureSchema,
    RequestInfoSchema,
    ResourceInfoSchema,
    RetryInfoSchema,
  ),
);

/**
 * The error a typed handler throws to end its call with a gRPC status: a code, a message for
 * the client and google.rpc details (sent as `grpc-status-details-bin`, a google.rpc.Status, as
 * every gRPC library reads them; the gateway renders them in its error body). Clients made with
 * `typedClient` throw it too, with the details the server sent (`findDetail` reads them).
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  /** Trailers sent with the status; `grpc-status-details-bin` is added when there are details. */
  readonly metadata: Metadata;
  /** The details as google.protobuf.Any (packed from the ones given, or as received). */
  readonly details: readonly Any[];

  constructor(
    readonly code: Code,
    message: string,
    details: readonly (ErrorDetail | Any)[] = [],
    metadata?: Metadata,
  ) {
    super(message);
    this.details =
      details.length === 0
        ? []
        : details.map((d) =>
            'desc' in d ? protobufWkt().anyPack(d.desc, protobufEs().create(d.desc, d.value)) : d,
          );
    this.metadata = metadata?.clone() ?? new (metadataClass())();
    if (this.details.length > 0) {
      const { create, toBinary } = protobufEs();
      const status = create(StatusSchema, { code, message, details: [...this.details] });
      this.metadata.set('grpc-status-details-bin', Buffer.from(toBinary(StatusSchema, status)));
    }
  }

  /** The first detail of type `desc`, unpacked, or undefined. */
  findDetail<Desc extends DescMessage>(desc: Desc): MessageShape<Desc> | undefined {
    for (const any of this.details) {
      if (any.typeUrl.slice(any.typeUrl.lastIndexOf('/') + 1) !== desc.typeName) continue;
      return protobufWkt().anyUnpack(any, desc);
    }
    return undefined;
  }
}

/** What grpc-js sends for an RpcError: its code, message and trailers. */
export function statusOf(
  err: RpcError,
  trailers?: Metadata,
): {
  code: Code;
  details: string;
  metadata: Metadata;
} {
  const metadata = err.metadata.clone();
  if (trailers) metadata.merge(trailers);
  return { code: err.code, details: err.message, metadata };
}

/**
 * An RpcError from a status a client received (details decoded from `grpc-status-details-bin`).
 * A client entry's mark (entry-core's UpstreamFailure) goes with it.
 */
export function rpcErrorOf(err: {
  code?: number;
  details?: string;
  message?: string;
  metadata?: Metadata;
}): RpcError {
  const code = (typeof err.code === 'number' ? err.code : Code.UNKNOWN) as Code;
  let details: Any[] = [];
  const bin = err.metadata?.get('grpc-status-details-bin')[0];
  if (bin instanceof Buffer) {
    try {
      details = protobufEs().fromBinary(StatusSchema, bin).details;
    } catch {
      details = [];
    }
  }
  const metadata = err.metadata?.clone() ?? new (metadataClass())();
  metadata.remove('grpc-status-details-bin');
  const rpc = new RpcError(code, err.details ?? err.message ?? '', details, metadata);
  const upstream = upstreamFailureOf(err);
  return upstream === undefined ? rpc : markUpstreamFailure(rpc, upstream);
}
