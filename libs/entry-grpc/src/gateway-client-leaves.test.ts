import { MiddlewareOrder } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from './test-support/harness.js';

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

describe('a middleware that is still deciding', () => {
  it('a gateway client that leaves while an asynchronous before runs: the handler never starts, the record says Canceled', async () => {
    const handled: string[] = [];
    h = await startLibrary('', {
      overrides: {
        ListBooks: (call: { end(): void }) => {
          handled.push('ListBooks');
          call.end();
        },
      },
      setup: (entry) =>
        entry.useMiddleware(MiddlewareOrder.Guard, {
          before: () => new Promise<void>((resolve) => setTimeout(resolve, 400)),
        }),
    });
    const abort = new AbortController();
    const pending = fetch(`${h.base}/v1/shelves/s/books`, {
      signal: abort.signal,
      headers: { 'x-request-id': 'gone-1' },
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 600));
    expect(handled).toEqual([]);
    const records = await h.stop();
    h = undefined;
    const rec = records.find(
      (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === 'gone-1',
    );
    expect(rec).toMatchObject({ resCode: 'Canceled' });
  });
});
