import type { DescService } from '@bufbuild/protobuf';
import { MethodOptions_IdempotencyLevel } from '@bufbuild/protobuf/wkt';
import { status } from '@grpc/grpc-js';
import { RpcError, type TypedCallOptions } from '@svcboot/grpc-typed';
import type { GrpcClientConfig } from './schema.js';

type Unary = (request: unknown, options?: TypedCallOptions) => Promise<unknown>;

/**
 * One more try, for unary methods the proto declares idempotent (`option idempotency_level =
 * IDEMPOTENT` or `NO_SIDE_EFFECTS`), of a call that failed with a retryable code after grpc-js
 * committed it (response headers had arrived when the connection broke: gRFC A6 never retries
 * those, since the server may have acted). Within the same deadline, after a jittered
 * `initialBackoffMs`, or after the server's pushback (`grpc-retry-pushback-ms`) when it sent one
 * (none at all when the pushback is negative or would pass the deadline). Other methods are left as they are. Mutates and returns `client`.
 */
export function retryIdempotent<C>(
  service: DescService,
  client: C,
  retry: GrpcClientConfig['retry'],
): C {
  if (retry.maxAttempts < 2) return client;
  const codes = new Set(retry.retryableCodes.map((name) => status[name]));
  const methods = client as Record<string, unknown>;
  for (const m of service.methods) {
    if (m.methodKind !== 'unary') continue;
    if (m.idempotency === MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN) continue;
    const once = methods[m.localName] as Unary;
    methods[m.localName] = async (request: unknown, options?: TypedCallOptions) => {
      // One deadline for both tries.
      const o =
        options?.timeoutMs !== undefined && options.deadline === undefined
          ? { ...options, deadline: new Date(Date.now() + options.timeoutMs), timeoutMs: undefined }
          : options;
      try {
        return await once(request, o);
      } catch (err) {
        if (!(err instanceof RpcError) || !codes.has(err.code as number)) throw err;
        if (o?.signal?.aborted) throw err;
        // The server's pushback (gRFC A6 `grpc-retry-pushback-ms`) wins over the backoff; a
        // negative or malformed one means do not retry.
        const pushback = pushbackMs(err);
        if (pushback === null) throw err;
        const wait = pushback ?? Math.random() * retry.initialBackoffMs;
        if (o?.deadline !== undefined && Date.now() + wait >= o.deadline.getTime()) throw err;
        await new Promise((resolve) => setTimeout(resolve, wait));
        return once(request, o);
      }
    };
  }
  return client;
}

/**
 * gRFC A6: the `grpc-retry-pushback-ms` trailer of a failed call, in ms; undefined without one (the
 * backoff applies), null when it says not to retry (negative or not a number).
 */
export function pushbackMs(err: RpcError): number | undefined | null {
  const v = err.metadata.get('grpc-retry-pushback-ms')[0];
  if (v === undefined) return undefined;
  const s = String(v);
  return /^\d+$/.test(s) ? Number(s) : null;
}
