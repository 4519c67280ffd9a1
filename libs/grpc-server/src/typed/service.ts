import type { Readable } from 'node:stream';
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import type {
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  UntypedHandleCall,
  UntypedServiceImplementation,
  sendUnaryData,
} from '@grpc/grpc-js';
import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import type { EntryContext } from '@svcboot/entry-core';
import { hiddenUpstreamFailure } from '@svcboot/entry-core/internal/call/upstream-failure';
import { callContextOf } from '../interceptor.js';
import { upstreamStatus } from '../upstream-status.js';
import { RpcError, definitionOf, statusOf, type TypedCallContext } from '@svcboot/grpc-typed';
import type { RequestCheck } from './validate.js';
import { VALIDATE_REQUEST } from './validate-middleware.js';

type AnyCall = ServerUnaryCall<unknown, unknown> & {
  on(event: 'cancelled', listener: () => void): unknown;
  getDeadline(): Date | number;
};

const NO_DEADLINE = Number.POSITIVE_INFINITY;

/**
 * The handler context of one call, from the grpc-js call and, when the entry's chain runs, its
 * CallContext. Made lazily: a handler that reads nothing costs one object.
 */
class CallState implements TypedCallContext {
  private headersMd: Metadata | undefined;
  private trailersMd: Metadata | undefined;
  private ownSignal: AbortSignal | undefined;
  headersSent = false;

  constructor(
    private readonly call: AnyCall,
    readonly path: string,
    readonly logger: EntryContext['logger'],
  ) {}

  get metadata(): Metadata {
    return this.call.metadata;
  }

  get deadline(): Date | undefined {
    const d = this.call.getDeadline();
    if (d instanceof Date) return d;
    return d === NO_DEADLINE || !Number.isFinite(d) ? undefined : new Date(d);
  }

  get signal(): AbortSignal {
    const chain = callContextOf(this.call);
    if (chain) return chain.signal;
    if (!this.ownSignal) {
      const controller = new AbortController();
      this.call.on('cancelled', () =>
        controller.abort(new DOMException('the client cancelled the call', 'AbortError')),
      );
      this.ownSignal = controller.signal;
    }
    return this.ownSignal;
  }

  get principal(): TypedCallContext['principal'] {
    return callContextOf(this.call)?.principal;
  }

  get requestId(): string {
    return callContextOf(this.call)?.requestId ?? '';
  }

  get responseHeaders(): Metadata {
    this.headersMd ??= new (metadataClass())();
    return this.headersMd;
  }

  get responseTrailers(): Metadata {
    this.trailersMd ??= new (metadataClass())();
    return this.trailersMd;
  }

  /** The trailers set, if any. */
  get trailers(): Metadata | undefined {
    return this.trailersMd;
  }

  /** Makes `err` the call's error in its record (unless one is set already). */
  keepError(err: unknown): void {
    const chain = callContextOf(this.call);
    if (chain !== undefined && chain.error === undefined) chain.error = err;
  }

  /** Sends the response headers once, if any were set. */
  sendHeaders(call: { sendMetadata(m: Metadata): void }): void {
    if (this.headersSent) return;
    this.headersSent = true;
    if (this.headersMd && Object.keys(this.headersMd.getMap()).length > 0)
      call.sendMetadata(this.headersMd);
  }
}

/**
 * A thrown RpcError as the status grpc-js sends; an outbound client's failure as its generic status
 * (unless the client passes its backend's text through; the error stays the record's); anything
 * else as it is (recovery answers INTERNAL).
 */
function failure(err: unknown, ctx: CallState): unknown {
  const upstream = hiddenUpstreamFailure(err);
  if (upstream !== undefined) {
    ctx.keepError(err);
    return upstreamStatus(upstream, ctx.trailers);
  }
  return err instanceof RpcError ? statusOf(err, ctx.trailers) : err;
}

/** Writes each message of `messages`, waiting for the stream to drain when it asks to. */
async function writeAll(
  call: ServerWritableStream<unknown, unknown>,
  messages: AsyncIterable<unknown>,
  ctx: CallState,
): Promise<void> {
  for await (const message of messages) {
    if (ctx.signal.aborted || call.cancelled) return;
    ctx.sendHeaders(call);
    if (!call.write(message)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          call.off('drain', done);
          call.off('cancelled', done);
          resolve();
        };
        call.on('drain', done);
        call.on('cancelled', done);
      });
    }
  }
}

type Handler = (...args: never[]) => unknown;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
  );
}

/**
 * The request messages of a streaming call. A plain `for await` on the call would destroy the
 * whole duplex once the requests end, before the handler's responses and status were sent.
 */
function requestsOf(
  call: Readable,
  check: ((message: unknown) => void) | undefined,
): AsyncIterable<unknown> {
  if (!check) return { [Symbol.asyncIterator]: () => call.iterator({ destroyOnReturn: false }) };
  return {
    async *[Symbol.asyncIterator]() {
      for await (const message of call.iterator({ destroyOnReturn: false })) {
        check(message);
        yield message;
      }
    },
  };
}

/** The grpc-js handler of one method, calling the typed handler `fn`. */
function adapt(
  method: DescMethod,
  path: string,
  fn: Handler,
  logger: EntryContext['logger'],
  checkOf: () => RequestCheck | undefined,
): UntypedHandleCall {
  const call0 = fn as unknown as (input: unknown, ctx: TypedCallContext) => unknown;
  /**
   * The request check in force (set at bootstrap), bound to this method's input type, when the
   * validate middleware marked the call (it is enabled and the call is not on its `ignore` list).
   */
  const check = (call: { metadata: Metadata }): ((message: unknown) => void) | undefined => {
    const c = checkOf();
    return c && callContextOf(call)?.get(VALIDATE_REQUEST)
      ? (message) => c(method.input, message as never)
      : undefined;
  };
  switch (method.methodKind) {
    case 'unary':
      // No async function: a handler's promise is followed with one then (a value it returns
      // answers at once); a failure is thrown, or rejects the returned promise, as before.
      return ((call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
        const ctx = new CallState(call as AnyCall, path, logger);
        let response: unknown;
        try {
          check(call)?.(call.request);
          response = call0(call.request, ctx);
        } catch (err) {
          throw failure(err, ctx);
        }
        if (isThenable(response))
          return response.then(
            (value) => {
              ctx.sendHeaders(call);
              callback(null, value, ctx.trailers);
            },
            (err: unknown) => {
              throw failure(err, ctx);
            },
          );
        ctx.sendHeaders(call);
        callback(null, response, ctx.trailers);
        return undefined;
      }) as UntypedHandleCall;
    case 'client_streaming':
      return (async (
        call: ServerReadableStream<unknown, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        const ctx = new CallState(call as unknown as AnyCall, path, logger);
        let response: unknown;
        try {
          response = await call0(requestsOf(call, check(call)), ctx);
        } catch (err) {
          throw failure(err, ctx);
        }
        ctx.sendHeaders(call);
        callback(null, response, ctx.trailers);
      }) as UntypedHandleCall;
    case 'server_streaming':
      return (async (call: ServerWritableStream<unknown, unknown>) => {
        const ctx = new CallState(call as unknown as AnyCall, path, logger);
        try {
          check(call)?.(call.request);
          await writeAll(call, call0(call.request, ctx) as AsyncIterable<unknown>, ctx);
        } catch (err) {
          throw failure(err, ctx);
        }
        ctx.sendHeaders(call);
        call.end(ctx.trailers);
      }) as UntypedHandleCall;
    case 'bidi_streaming':
      return (async (call: ServerDuplexStream<unknown, unknown>) => {
        const ctx = new CallState(call as unknown as AnyCall, path, logger);
        try {
          await writeAll(
            call as unknown as ServerWritableStream<unknown, unknown>,
            call0(requestsOf(call, check(call)), ctx) as AsyncIterable<unknown>,
            ctx,
          );
        } catch (err) {
          throw failure(err, ctx);
        }
        ctx.sendHeaders(call);
        call.end(ctx.trailers);
      }) as UntypedHandleCall;
  }
}

/**
 * A generated service and its typed implementation as what the entry registers: a grpc-js
 * definition (protobuf-es codecs) and grpc-js handlers, so typed calls take the same middleware
 * chain, recovery, gateway and gRPC-Web paths as any other. `missing`: the methods the
 * implementation has no handler for (the caller refuses them).
 */
export function adaptService(
  service: DescService,
  implementation: Record<string, unknown>,
  logger: EntryContext['logger'],
  checkOf: () => RequestCheck | undefined = () => undefined,
): {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
  missing: string[];
} {
  const definition = definitionOf(service);
  const handlers: UntypedServiceImplementation = {};
  const missing: string[] = [];
  for (const m of service.methods) {
    const fn = implementation[m.localName];
    if (typeof fn !== 'function') {
      missing.push(`${m.localName} (rpc ${m.name})`);
      continue;
    }
    const bound = (fn as Handler).bind(implementation) as Handler;
    handlers[m.name] = adapt(m, `/${service.typeName}/${m.name}`, bound, logger, checkOf);
  }
  return { definition, implementation: handlers, missing };
}
