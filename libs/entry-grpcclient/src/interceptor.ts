import {
  InterceptingCall,
  Metadata,
  status,
  type Interceptor,
  type StatusObject,
} from '@grpc/grpc-js';
import type { AdaptiveBreaker } from './breaker.js';
import { CODE_NAMES } from '@svcboot/entry-grpc';
import { endClientSpan, startClientSpan } from './client-span.js';
import type { ClientMetrics } from './metrics.js';
import {
  outboundDeadline,
  propagate,
  type InboundCall,
  type PropagationOptions,
} from './propagation.js';

/** Status codes that count as the backend failing, for the breaker (as kratos counts them). */
const FAILURES = new Set<number>([
  status.UNKNOWN,
  status.DEADLINE_EXCEEDED,
  status.RESOURCE_EXHAUSTED,
  status.INTERNAL,
  status.UNAVAILABLE,
  status.DATA_LOSS,
]);

/** What the outbound interceptor of one client entry needs. */
export interface OutboundOptions extends PropagationOptions {
  /** The entry's name, for messages and metric labels. */
  readonly client: string;
  readonly target: string;
  readonly breaker: AdaptiveBreaker | undefined;
  readonly metrics: ClientMetrics;
}

function deadlineMs(d: Date | number | undefined): number {
  if (d === undefined) return Infinity;
  return typeof d === 'number' ? d : d.getTime();
}

/**
 * The grpc-js interceptor of a client entry, for calls made on behalf of `inbound` (or of none):
 * the deadline and metadata it propagates, the breaker's verdict (a refused call ends at once
 * with UNAVAILABLE, never reaching the channel), and the outcome counted for the breaker and
 * `grpc_client_handled_total`. Retries happen below it, in grpc-js: the breaker sees a call once.
 */
export function outboundInterceptor(
  o: OutboundOptions,
  inbound: InboundCall | undefined,
): Interceptor {
  return (options, nextCall) => {
    const method = options.method_definition.path;
    const deadline = outboundDeadline(deadlineMs(options.deadline), inbound, o);
    const next = nextCall(
      deadline === Infinity ? options : { ...options, deadline: new Date(deadline) },
    );
    const breaker = o.breaker;
    if (breaker !== undefined && !breaker.allow()) {
      o.metrics.breakerRejected.inc({ client: o.client });
      o.metrics.breakerState.set({ client: o.client }, 1);
      return new InterceptingCall(next, {
        start(_metadata, listener) {
          const details = `grpcclient "${o.client}" (${o.target}): circuit breaker open, ${method} not sent; the backend failed most recent calls`;
          queueMicrotask(() => {
            o.metrics.handled.inc({
              client: o.client,
              grpc_method: method,
              grpc_code: CODE_NAMES[status.UNAVAILABLE] ?? 'Unavailable',
            });
            listener.onReceiveStatus({
              code: status.UNAVAILABLE,
              details,
              metadata: new Metadata(),
            });
          });
        },
        sendMessage() {},
        halfClose() {},
        cancel() {},
      });
    }
    return new InterceptingCall(next, {
      start(metadata, _listener, start) {
        const client = startClientSpan(method, o.target);
        propagate(metadata, inbound, o, client?.ctx);
        start(metadata, {
          onReceiveStatus(s: StatusObject, done) {
            if (client !== undefined)
              endClientSpan(client.span, s.code, CODE_NAMES[s.code] ?? String(s.code), s.details);
            if (breaker !== undefined) {
              if (FAILURES.has(s.code)) breaker.onFailed();
              else breaker.onAccepted();
              o.metrics.breakerState.set({ client: o.client }, breaker.state === 'open' ? 1 : 0);
            }
            o.metrics.handled.inc({
              client: o.client,
              grpc_method: method,
              grpc_code: CODE_NAMES[s.code] ?? String(s.code),
            });
            done(s);
          },
        });
      },
    });
  };
}
