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
 * `initialBackoffMs`. Other methods are left as they are. Mutates and returns `client`.
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
        const wait = Math.random() * retry.initialBackoffMs;
        if (o?.deadline !== undefined && Date.now() + wait >= o.deadline.getTime()) throw err;
        await new Promise((resolve) => setTimeout(resolve, wait));
        return once(request, o);
      }
    };
  }
  return client;
}
