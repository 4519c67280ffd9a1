import { Code, RpcError, type TypedCallOptions } from '@svcboot/entry-grpc';
import { describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import { pushbackMs, retryIdempotent } from './idempotent-retry.js';
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
  return failingWith(undefined, ...codes);
}

/** As `failing`, each failure with the trailer `grpc-retry-pushback-ms: pushback` when given. */
function failingWith(pushback: string | undefined, ...codes: Code[]) {
  const seen: (TypedCallOptions | undefined)[] = [];
  return {
    seen,
    client: {
      call: async (_req: unknown, o?: TypedCallOptions) => {
        seen.push(o);
        const code = codes[seen.length - 1];
        if (code !== undefined) {
          const md = new Metadata();
          if (pushback !== undefined) md.set('grpc-retry-pushback-ms', pushback);
          throw new RpcError(code, 'connection reset', [], md);
        }
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

  it("honours the server's pushback (gRFC A6): not before it, not past the deadline, never when negative", async () => {
    const err = (v: string) => {
      const md = new Metadata();
      md.set('grpc-retry-pushback-ms', v);
      return new RpcError(Code.UNAVAILABLE, 'shed', [], md);
    };
    expect(pushbackMs(err('250'))).toBe(250);
    expect(pushbackMs(err('-1'))).toBeNull();
    expect(pushbackMs(err('soon'))).toBeNull();
    expect(pushbackMs(new RpcError(Code.UNAVAILABLE, 'x'))).toBeUndefined();

    // A pushback longer than the time left: the caller learns at once, the server is not asked again.
    const late = failingWith('10000', Code.UNAVAILABLE);
    retryIdempotent(Echo, late.client, retry(3));
    await expect(late.client.call({}, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: Code.UNAVAILABLE,
    });
    expect(late.seen).toHaveLength(1);

    const never = failingWith('-1', Code.UNAVAILABLE);
    retryIdempotent(Echo, never.client, retry(3));
    await expect(never.client.call({}, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: Code.UNAVAILABLE,
    });
    expect(never.seen).toHaveLength(1);

    // A short one: retried once it has passed.
    const soon = failingWith('30', Code.UNAVAILABLE);
    retryIdempotent(Echo, soon.client, retry(3));
    const t0 = Date.now();
    await expect(soon.client.call({}, { timeoutMs: 5000 })).resolves.toBe('answer');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(29);
    expect(soon.seen).toHaveLength(2);
  });
});
