import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type { Metadata, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { CallPrincipal, EntryContext } from '@svcboot/entry-core';

/** What a typed handler gets besides its request: the call's metadata, deadline, principal, … */
export interface TypedCallContext {
  /** `/bookstore.v1.Bookstore/GetBook` */
  readonly path: string;
  /** The request metadata (gRPC metadata; on the gateway, the headers it forwards). */
  readonly metadata: Metadata;
  /** When the call must be answered by; undefined without a deadline. */
  readonly deadline: Date | undefined;
  /** Aborts when the deadline passes or the client goes away: pass it to fetch, drivers, timers. */
  readonly signal: AbortSignal;
  /** Who the call is from, once a guard (auth, jwt) verified it. */
  readonly principal: CallPrincipal | undefined;
  /** The call's request id (X-Request-Id), '' when the entry has no middleware chain. */
  readonly requestId: string;
  /** The entry's logger. */
  readonly logger: EntryContext['logger'];
  /** Sent before the first response message (or with the status when there is none). */
  readonly responseHeaders: Metadata;
  /** Sent with the status, after the last response message. */
  readonly responseTrailers: Metadata;
}

type Init<O> = O extends DescMessage ? MessageInitShape<O> : never;
type Shape<I> = I extends DescMessage ? MessageShape<I> : never;

/** The handler of one method, by its kind: what a generated method descriptor asks for. */
export type TypedHandler<M> = M extends {
  methodKind: infer K;
  input: infer I;
  output: infer O;
}
  ? K extends 'unary'
    ? (request: Shape<I>, context: TypedCallContext) => Promise<Init<O>> | Init<O>
    : K extends 'server_streaming'
      ? (request: Shape<I>, context: TypedCallContext) => AsyncIterable<Init<O>>
      : K extends 'client_streaming'
        ? (requests: AsyncIterable<Shape<I>>, context: TypedCallContext) => Promise<Init<O>>
        : K extends 'bidi_streaming'
          ? (requests: AsyncIterable<Shape<I>>, context: TypedCallContext) => AsyncIterable<Init<O>>
          : never
  : never;

/**
 * A typed implementation of a generated service (protoc-gen-es output): one handler per method,
 * by the method's local name (`getBook`). Unary: `async (request, context) => response`; server
 * streaming: an async generator; client streaming: an AsyncIterable of requests in, a response
 * out; bidi: both. A response may be a message or its init shape (plain fields).
 */
export type ServiceImpl<S> =
  S extends GenService<infer M extends GenServiceMethods>
    ? { [K in keyof M]: TypedHandler<M[K]> }
    : never;

/**
 * What `GrpcEntry.addService(definition, implementation)` takes as `implementation`: for a
 * generated service its typed implementation (ServiceImpl), every method; for a grpc-js /
 * proto-loader `ServiceDefinition<I>` grpc-js handlers of `I`, any of them (grpc-js answers a
 * method without one UNIMPLEMENTED).
 */
export type ServiceImplementationOf<D> =
  // A definition typed `any` or `never` (a cast): grpc-js handlers, as grpc-js takes them.
  0 extends 1 & D
    ? UntypedServiceImplementation
    : [D] extends [never]
      ? UntypedServiceImplementation
      : ServiceImplementationOfDefinition<D>;

type ServiceImplementationOfDefinition<D> =
  D extends GenService<GenServiceMethods>
    ? ServiceImpl<D>
    : D extends ServiceDefinition<infer I>
      ? Partial<I>
      : never;
