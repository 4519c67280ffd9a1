import { Code, RpcError, type TypedCallOptions } from '@svcboot/entry-grpc';
import { describe, expect, it } from 'vitest';
import { retryIdempotent } from './idempotent-retry.js';
import { grpcClientSchema } from './schema.js';
import { Echo } from './test-support/gen/echo/v1/echo_pb.js';

const retry = (maxAttempts: number) =>
  grpcClientSchema.parse({
    name: 'x',
    target: 'dns:///x:1',
    retry: { maxAttempts, initialBackoffMs: 1, retryableCodes: ['UNAVAILABLE'] },
  }).retry;

/** A client whose `call` fails with `codes` in turn, then answers; counts the tries. */
function failing(...codes: Code[]) {
  const seen: (TypedCallOptions | undefined)[] = [];
  return {
    seen,
    client: {
      call: async (_req: unknown, o?: TypedCallOptions) => {
        seen.push(o);
        const code = codes[seen.length - 1];
        if (code !== undefined) throw new RpcError(code, 'connection reset');
        return 'answer';
      },
    },
  };
}

describe('retryIdempotent (Echo.Call is NO_SIDE_EFFECTS)', () => {
  it('tries once more after a retryable code, within the first try’s deadline', async () => {
    const { client, seen } = failing(Code.UNAVAILABLE);
    retryIdempotent(Echo, client, retry(3));
    await expect(client.call({}, { timeoutMs: 5000 })).resolves.toBe('answer');
    expect(seen).toHaveLength(2);
    expect(seen[1]?.deadline).toBe(seen[0]?.deadline);
    expect(seen[0]?.deadline).toBeInstanceOf(Date);
  });

  it('only once, and not for other codes or with retries off', async () => {
    const twice = failing(Code.UNAVAILABLE, Code.UNAVAILABLE);
    retryIdempotent(Echo, twice.client, retry(3));
    await expect(twice.client.call({})).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    expect(twice.seen).toHaveLength(2);

    const internal = failing(Code.INTERNAL);
    retryIdempotent(Echo, internal.client, retry(3));
    await expect(internal.client.call({})).rejects.toMatchObject({ code: Code.INTERNAL });
    expect(internal.seen).toHaveLength(1);

    const off = failing(Code.UNAVAILABLE);
    retryIdempotent(Echo, off.client, retry(1));
    await expect(off.client.call({})).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    expect(off.seen).toHaveLength(1);
  });
});
