import {
  InterceptingCall,
  Metadata,
  type Interceptor,
  type InterceptorOptions,
  type Listener,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  CallContext,
  type CallInfo,
  type CallRejection,
  type InboundCall,
} from '@svcboot/entry-core';
import {
  GRPC_CODE_NAMES as CODE_NAMES,
  endCall,
  markUpstreamFailure,
  outboundDeadline,
  propagateHeaders,
  startCall,
  type CallAdapter,
  type CallChain,
  type PropagationOptions,
  type UpstreamFailure,
  RPC_METHOD,
  type RpcMethod,
} from '@svcboot/entry-core/call';
import { MetadataHeaders } from './metadata-headers.js';

/** What the outbound interceptor of one client entry needs. */
export interface OutboundOptions extends PropagationOptions {
  /** The target as configured: the record's `remoteAddr`, the span's `server.address`. */
  readonly target: string;
  /** The client's middleware chain (records, metrics, the client span, the breaker). */
  readonly chain: () => CallChain;
  /** What the inbound caller may see of a failed call, by its gRPC code (`errors.passThrough`). */
  readonly failure: (code: number) => UpstreamFailure;
}

function deadlineMs(d: Date | number | undefined): number {
  if (d === undefined) return Infinity;
  return typeof d === 'number' ? d : d.getTime();
}

/** The call model of one outbound RPC, by method path: its info and RpcMethod are the same for every call. */
const infos = new Map<string, { info: CallInfo; rpc: RpcMethod }>();

function callInfoOf(
  options: InterceptorOptions,
  target: string,
): { info: CallInfo; rpc: RpcMethod } {
  const def = options.method_definition;
  const key = `${target} ${def.path}`;
  let known = infos.get(key);
  if (known === undefined) {
    const [, service = '', method = ''] = def.path.split('/');
    const info: CallInfo = {
      operation: def.path,
      remoteAddr: target,
      apiMethod: 'POST',
      apiPath: def.path,
      apiProtocol: 'grpc',
      apiQuery: '',
      userAgent: '',
    };
    const type = def.requestStream
      ? def.responseStream
        ? 'BidiStream'
        : 'ClientStream'
      : def.responseStream
        ? 'ServerStream'
        : 'UnaryClient';
    known = { info, rpc: Object.freeze({ service, method, type }) };
    if (infos.size < 10_000) infos.set(key, known);
  }
  return known;
}

/**
 * The grpc-js interceptor of a client entry, for calls made on behalf of `inbound` (or of none):
 * the propagated deadline and metadata, then the call through entry-core's call driver with the
 * client's chain (records with the client's entry type, `grpc_client_*` metrics, the client span,
 * the breaker: a refused call ends at once with UNAVAILABLE, never reaching the channel). The
 * chain's `after`s run when the status arrives. Retries happen below it, in grpc-js: the chain
 * sees a call once.
 */
export function outboundInterceptor(
  o: OutboundOptions,
  inbound: InboundCall | undefined,
): Interceptor {
  return (options, nextCall) => {
    const deadline = outboundDeadline(deadlineMs(options.deadline), inbound, o);
    const next = nextCall(
      deadline === Infinity ? options : { ...options, deadline: new Date(deadline) },
    );
    const { info, rpc } = callInfoOf(options, o.target);
    // Set when the chain refused the call: what the caller still sends is dropped.
    let refused = false;
    return new InterceptingCall(next, {
      start(metadata, listener, start) {
        propagateHeaders(new MetadataHeaders(metadata), inbound, o);
        const call = new CallContext(info, new MetadataHeaders(metadata));
        call.set(RPC_METHOD, rpc);
        call.deadline = deadline;
        const adapter: CallAdapter = {
          proceed(c) {
            const ending: Partial<Listener> = {
              onReceiveStatus(s: StatusObject, done: (s: StatusObject) => void) {
                if (s.code === 0) {
                  endCall(c, 'OK');
                  return done(s);
                }
                c.error = new Error(s.details);
                endCall(c, CODE_NAMES[s.code] ?? `Code(${s.code})`);
                // grpc-js copies the status onto the error it gives the caller, the mark included.
                done(markUpstreamFailure({ ...s }, o.failure(s.code)));
              },
            };
            c.runInScope(() => start(metadata, ending), undefined, undefined);
          },
          refuse(c, rejection: CallRejection) {
            refused = true;
            queueMicrotask(() => {
              endCall(c, rejection.status);
              const code = codeOf(rejection.status);
              listener.onReceiveStatus(
                markUpstreamFailure(
                  { code, details: rejection.message, metadata: new Metadata() },
                  o.failure(code),
                ),
              );
            });
          },
        };
        startCall(o.chain(), call, adapter);
      },
      sendMessage(message, send) {
        if (!refused) send(message);
      },
      halfClose(close) {
        if (!refused) close();
      },
    });
  };
}

/** The gRPC code of a rejection's status (its names are gRPC's code names). */
function codeOf(status: string): number {
  const n = CODE_NAMES.indexOf(status);
  return n < 0 ? 2 : n;
}
