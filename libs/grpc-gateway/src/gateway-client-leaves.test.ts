import type { CallContext } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from '../../grpc-server/src/test-support/harness.js';

/**
 * A gateway client that goes away while an asynchronous before still decides. How a refusal,
 * an early answer and a failing middleware end a call on each transport is checked by
 * tools/conformance.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/**
 * The library server with one middleware, `authn`, whose before is `before`; returns the list
 * ListBooks' handler appends to when it runs (the server is also `h`, which afterEach stops).
 */
async function startWithBefore(
  before: (call: CallContext) => Promise<void>,
): Promise<{ server: Harness; handled: string[] }> {
  const handled: string[] = [];
  const server = await startLibrary('', {
    overrides: {
      ListBooks: (call: { end(): void }) => {
        handled.push('ListBooks');
        call.end();
      },
    },
    setup: (entry) => entry.useMiddleware('authn', { before }),
  });
  h = server;
  return { server, handled };
}

describe('a middleware that is still deciding', () => {
  it('a gateway client that leaves while an asynchronous before runs: the handler never starts, the record says Canceled', async () => {
    // The before runs until the server has seen the client leave (the call's signal aborts), at
    // most 20 s; the test waits for it to start, and for it to settle, instead of sleeping.
    let started!: () => void;
    const beforeStarted = new Promise<void>((r) => (started = r));
    let settled!: () => void;
    const beforeSettled = new Promise<void>((r) => (settled = r));
    const { server, handled } = await startWithBefore(
      (call) =>
        new Promise<void>((resolve) => {
          started();
          const done = () => {
            clearTimeout(limit);
            // After the transport's continuation of this before has had its turn.
            resolve();
            setImmediate(settled);
          };
          const limit = setTimeout(done, 20_000);
          if (call.signal.aborted) done();
          else call.signal.addEventListener('abort', done, { once: true });
        }),
    );
    const abort = new AbortController();
    const pending = fetch(`${server.base}/v1/shelves/s/books`, {
      signal: abort.signal,
      headers: { 'x-request-id': 'gone-1' },
    }).catch(() => undefined);
    await beforeStarted;
    abort.abort();
    await pending;
    await beforeSettled;
    expect(handled).toEqual([]);
    const records = await server.stop();
    h = undefined;
    const rec = records.find(
      (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === 'gone-1',
    );
    expect(rec).toMatchObject({ resCode: 'Canceled' });
  });
});

describe('a deadline that passes while a middleware decides', () => {
  it('grpc-gateway words it as an expired context: 504, code 4, "context deadline exceeded", whether it passed before the handler started or while it ran', async () => {
    // Lets the call through only once its deadline (the client's Grpc-Timeout) has passed.
    const { server, handled } = await startWithBefore(
      (call) =>
        new Promise<void>((resolve) => {
          const wait = () => {
            const left = call.deadline - Date.now();
            if (left < 0) resolve();
            else setTimeout(wait, left + 1);
          };
          wait();
        }),
    );
    const res = await fetch(`${server.base}/v1/shelves/s/books`, {
      headers: { 'grpc-timeout': '20m' },
    });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      code: 4,
      message: 'context deadline exceeded',
      details: [],
    });
    expect(handled).toEqual([]);
  });
});
