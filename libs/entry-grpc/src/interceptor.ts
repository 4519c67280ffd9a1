import { Metadata, ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js';
import { CallContext, type CallChain, type CallHeaders, type CallInfo } from '@svcboot/entry-core';
import { codeName } from './codes.js';
import { grpcCallInfo, grpcTypeOf, plainPeer } from './call-info.js';

/** Where a handler finds its call's context: `callContextOf(call)`. */
export const CALL_CONTEXT: unique symbol = Symbol.for('svcboot.grpc.callContext');

type WithContext = { [CALL_CONTEXT]?: CallContext };

/** The CallContext of a call as a handler sees it (gRPC or gateway), if the entry has middleware. */
export function callContextOf(call: { metadata: Metadata }): CallContext | undefined {
  return (call.metadata as Metadata & WithContext)[CALL_CONTEXT];
}

export function attachContext(metadata: Metadata, ctx: CallContext): void {
  (metadata as Metadata & WithContext)[CALL_CONTEXT] = ctx;
}

/**
 * Request metadata in, response headers out (lowercase keys, as gRPC wants). The response headers
 * are kept as pairs and written straight into the metadata grpc-js sends: no Metadata of their own.
 */
export class MetadataHeaders implements CallHeaders {
  /** Response headers set by the middleware, flat: key, value, key, value… */
  readonly out: string[] = [];
  constructor(private readonly incoming: Metadata) {}
  get(name: string): string | undefined {
    const v = this.incoming.get(name.toLowerCase());
    return v.length > 0 ? String(v[0]) : undefined;
  }
  set(name: string, value: string): void {
    this.out.push(name.toLowerCase(), value);
  }
  /** Adds the response headers to `md` (after what a handler put there, as Metadata.merge would). */
  writeTo(md: Metadata): void {
    const out = this.out;
    for (let i = 0; i < out.length; i += 2) md.add(out[i]!, out[i + 1]!);
  }
}

function firstValue(md: Metadata, key: string): string {
  const v = md.get(key);
  return v.length > 0 ? String(v[0]) : '';
}

/**
 * The entry's middleware chain as a grpc-js server interceptor: a CallContext per call, `before`
 * when the request metadata arrives, response headers merged into the initial metadata (or the
 * trailers-only response), `after` once the status is sent or the call is cancelled.
 */
export function middlewareInterceptor(chain: CallChain): ServerInterceptor {
  const infos = new Map<string, CallInfo>();
  return (desc, call) => {
    let info = infos.get(desc.path);
    if (!info) {
      info = grpcCallInfo(desc.path, grpcTypeOf(desc.requestStream, desc.responseStream));
      infos.set(desc.path, info);
    }
    const base = info;
    let ctx: CallContext | undefined;
    let headers: MetadataHeaders | undefined;
    let metadataSent = false;
    let done = false;
    const finish = (code: string, details: string | undefined): void => {
      if (done || !ctx) return;
      done = true;
      ctx.resCode = code;
      if (code !== 'OK' && details) ctx.error = details;
      chain.after(ctx);
    };
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(md, nextMd) {
            headers = new MetadataHeaders(md);
            ctx = new CallContext({ ...base, remoteAddr: plainPeer(call.getPeer()), userAgent: firstValue(md, 'user-agent') }, headers);
            attachContext(md, ctx);
            chain.before(ctx);
            nextMd(md);
          },
          onCancel() {
            finish('Canceled', 'the client cancelled the call');
          },
        });
      },
      sendMetadata(md, next) {
        metadataSent = true;
        // SPEC.md 4.1: gRPC responses say `application/grpc` (grpc-js would say `application/grpc+proto`).
        md.set('content-type', 'application/grpc');
        headers?.writeTo(md);
        next(md);
      },
      sendStatus(status, next) {
        if (!metadataSent && headers && headers.out.length > 0) {
          const md = status.metadata ?? new Metadata();
          headers.writeTo(md);
          status = { ...status, metadata: md };
        }
        next(status);
        finish(codeName(status.code ?? 2), status.details);
      },
    });
  };
}
