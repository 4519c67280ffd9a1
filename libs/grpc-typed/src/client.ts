import type { DescMessage, DescService, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type {
  Client,
  CallOptions as GrpcCallOptions,
  ChannelCredentials,
  ChannelOptions,
  ClientReadableStream,
  ClientWritableStream,
  ServiceError,
  StatusObject,
} from '@grpc/grpc-js';
import type { Metadata } from '@grpc/grpc-js';
import { grpcJs, metadataClass } from './grpc-js.js';
/** What every grpc-js client call emits. */
interface SurfaceCall {
  on(event: 'metadata', listener: (m: Metadata) => void): unknown;
  on(event: 'status', listener: (s: StatusObject) => void): unknown;
}

import { rpcErrorOf } from './error.js';
import { codecOf } from './codec.js';

/** Per-call options of a typed client. */
export interface TypedCallOptions {
  /** Request metadata: a Metadata, or plain text headers. */
  metadata?: Metadata | Record<string, string>;
  /** When the call must be answered by: a Date, or milliseconds from now. */
  timeoutMs?: number;
  deadline?: Date;
  /** Cancels the call (the promise rejects / the iteration throws with CANCELLED). */
  signal?: AbortSignal;
  /** Told of the response headers when they arrive. */
  onHeader?: (headers: Metadata) => void;
  /** Told of the trailers when the call ends (with its status). */
  onTrailer?: (trailers: Metadata) => void;
}

type Init<I> = I extends DescMessage ? MessageInitShape<I> : never;
type Shape<O> = O extends DescMessage ? MessageShape<O> : never;

/** The client method of one RPC, by its kind. */
export type TypedClientMethod<M> = M extends {
  methodKind: infer K;
  input: infer I;
  output: infer O;
}
  ? K extends 'unary'
    ? (request: Init<I>, options?: TypedCallOptions) => Promise<Shape<O>>
    : K extends 'server_streaming'
      ? (request: Init<I>, options?: TypedCallOptions) => AsyncIterable<Shape<O>>
      : K extends 'client_streaming'
        ? (requests: AsyncIterable<Init<I>>, options?: TypedCallOptions) => Promise<Shape<O>>
        : K extends 'bidi_streaming'
          ? (
              requests: AsyncIterable<Init<I>>,
              options?: TypedCallOptions,
            ) => AsyncIterable<Shape<O>>
          : never
  : never;

/**
 * A typed client of a generated service: one method per RPC (by its local name). Errors are
 * RpcError (code, message, google.rpc details). `$close()` closes the channel it opened (a
 * client made on a grpc-js Client you passed leaves it to you).
 */
export type TypedClient<S> = (S extends GenService<infer M extends GenServiceMethods>
  ? { [K in keyof M]: TypedClientMethod<M[K]> }
  : never) & { $close(): void };

export interface TypedClientOptions {
  /** Channel credentials; insecure (plaintext) by default. */
  credentials?: ChannelCredentials;
  /** grpc-js channel options. */
  channelOptions?: ChannelOptions;
}

function metadataOf(m: TypedCallOptions['metadata']): Metadata {
  if (m instanceof metadataClass()) return m;
  const md = new (metadataClass())();
  for (const [k, v] of Object.entries(m ?? {})) md.set(k, v);
  return md;
}

function grpcOptions(o: TypedCallOptions | undefined): GrpcCallOptions {
  const deadline =
    o?.deadline ?? (o?.timeoutMs !== undefined ? new Date(Date.now() + o.timeoutMs) : undefined);
  return deadline ? { deadline } : {};
}

/** Cancels `call` when `signal` aborts; returns the listener's remover. */
function cancelOn(call: { cancel(): void }, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    call.cancel();
    return () => {};
  }
  const cancel = (): void => call.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  return () => signal.removeEventListener('abort', cancel);
}

/** Listens for the call's headers and trailers as the options ask. */
function watch(call: SurfaceCall, o: TypedCallOptions | undefined): void {
  if (o?.onHeader) call.on('metadata', o.onHeader);
  const onTrailer = o?.onTrailer;
  if (onTrailer) call.on('status', (s) => onTrailer(s.metadata));
}

/** Feeds `requests` into a client stream, ending it after the last (or on an error). */
async function pump(
  call: ClientWritableStream<unknown>,
  requests: AsyncIterable<unknown>,
): Promise<void> {
  try {
    for await (const r of requests) {
      if (!call.write(r)) await new Promise((resolve) => call.once('drain', resolve));
    }
    call.end();
  } catch (err) {
    call.cancel();
    throw err;
  }
}

/** The messages of a response stream, with its error as an RpcError. */
async function* messagesOf(call: ClientReadableStream<unknown>): AsyncGenerator<never> {
  try {
    for await (const m of call) yield m as never;
  } catch (err) {
    throw rpcErrorOf(err as ServiceError);
  } finally {
    call.cancel();
  }
}

/**
 * A typed client of `service` (protoc-gen-es output) over the network, to any gRPC server:
 * `target` is an address (`localhost:8080`, `dns:///orders:443`) or a grpc-js Client whose
 * channel it shares. Messages are encoded with @bufbuild/protobuf.
 */
export function typedClient<S extends GenService<GenServiceMethods>>(
  service: S,
  target: string | Client,
  options: TypedClientOptions = {},
): TypedClient<S> {
  const desc = service as unknown as DescService;
  const owned = typeof target === 'string';
  let client: Client;
  if (typeof target === 'string') {
    const grpc = grpcJs();
    client = new grpc.Client(
      target,
      options.credentials ?? grpc.credentials.createInsecure(),
      options.channelOptions ?? {},
    );
  } else client = target;
  const out: Record<string, unknown> = {
    $close: () => {
      if (owned) client.close();
    },
  };
  for (const m of desc.methods) {
    const path = `/${desc.typeName}/${m.name}`;
    const req = codecOf(m.input);
    const res = codecOf(m.output);
    const serialize = req.serialize as (v: unknown) => Buffer;
    const deserialize = res.deserialize as (b: Buffer) => unknown;
    switch (m.methodKind) {
      case 'unary':
        out[m.localName] = (request: unknown, o?: TypedCallOptions) =>
          new Promise((resolve, reject) => {
            const call = client.makeUnaryRequest(
              path,
              serialize,
              deserialize,
              request,
              metadataOf(o?.metadata),
              grpcOptions(o),
              (err, value) => {
                stop();
                if (err) reject(rpcErrorOf(err));
                else resolve(value);
              },
            );
            const stop = cancelOn(call, o?.signal);
            watch(call, o);
          });
        break;
      case 'server_streaming':
        out[m.localName] = (request: unknown, o?: TypedCallOptions) => {
          const call = client.makeServerStreamRequest(
            path,
            serialize,
            deserialize,
            request,
            metadataOf(o?.metadata),
            grpcOptions(o),
          );
          cancelOn(call, o?.signal);
          watch(call, o);
          return messagesOf(call);
        };
        break;
      case 'client_streaming':
        out[m.localName] = (requests: AsyncIterable<unknown>, o?: TypedCallOptions) =>
          new Promise((resolve, reject) => {
            const call = client.makeClientStreamRequest(
              path,
              serialize,
              deserialize,
              metadataOf(o?.metadata),
              grpcOptions(o),
              (err, value) => {
                stop();
                if (err) reject(rpcErrorOf(err));
                else resolve(value);
              },
            );
            const stop = cancelOn(call, o?.signal);
            watch(call, o);
            pump(call, requests).catch(reject);
          });
        break;
      case 'bidi_streaming':
        out[m.localName] = (requests: AsyncIterable<unknown>, o?: TypedCallOptions) => {
          const call = client.makeBidiStreamRequest(
            path,
            serialize,
            deserialize,
            metadataOf(o?.metadata),
            grpcOptions(o),
          );
          cancelOn(call, o?.signal);
          watch(call, o);
          void pump(call as unknown as ClientWritableStream<unknown>, requests).catch(() => {});
          return messagesOf(call as unknown as ClientReadableStream<unknown>);
        };
        break;
    }
  }
  return out as TypedClient<S>;
}
