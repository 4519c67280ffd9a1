import { CallAnswer } from '@svcboot/entry-core/call';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('a CallAnswer (an early HTTP answer) from a middleware', () => {
  it('is rendered on a gateway call (status, headers, no body) and refused as INTERNAL on a native gRPC call; no handler runs', async () => {
    const handled: string[] = [];
    h = await startLibrary('', {
      overrides: {
        Ping: (_call: unknown, cb: (e: null, r: unknown) => void) => {
          handled.push('Ping');
          cb(null, { text: 'pong' });
        },
        GetShelf: (_call: unknown, cb: (e: null, r: unknown) => void) => {
          handled.push('GetShelf');
          cb(null, {});
        },
      },
      setup: (entry) =>
        entry.useMiddleware('browser', {
          before() {
            throw new CallAnswer(
              202,
              { 'X-Answered': 'early' },
              { middleware: 'probe', reason: 'early' },
            );
          },
        }),
    });
    const r = await fetch(`${h.base}/v1/shelves/s1`);
    expect([
      r.status,
      r.headers.get('x-answered'),
      r.headers.get('content-length'),
      await r.text(),
    ]).toEqual([202, 'early', '0', '']);
    const grpc = await unary(h.client, 'Ping', { text: 'a' });
    expect(grpc.error?.code).toBe(13);
    expect(grpc.error?.details).toMatch(/probe answered an HTTP-only early answer \(202\)/);
    expect(handled).toEqual([]);
  });
});
