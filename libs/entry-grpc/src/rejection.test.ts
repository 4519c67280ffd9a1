import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CallRejection,
  isIgnored,
  MiddlewareOrder,
  type CallContext,
  type CallMiddleware,
} from '@svcboot/entry-core';
import { libraryImplementation } from './test-support/library-service.js';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

/** A test-only guard: refuses calls without `authorization` unless they are on its ignore list. */
function tokenGuard(ignore: readonly string[], mode: Mode): CallMiddleware {
  const check = (call: CallContext): void => {
    if (isIgnored(ignore, call.info)) return;
    if (call.headers.get('authorization') === undefined)
      throw new CallRejection('Unauthenticated', 'missing token', {
        'WWW-Authenticate': 'Bearer realm="library"',
      });
  };
  if (mode === 'sync') return { before: check };
  // Decides later, as a JWKS fetch or a shared rate limit would: the call waits for it.
  return {
    before: (call) =>
      new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => check(call)),
  };
}

type Mode = 'sync' | 'async';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function start(handled: string[], mode: Mode): Promise<Harness> {
  return startLibrary('    enableSvcGwOption: true\n', {
    overrides: {
      Ping: (call: { request: Record<string, unknown> }, cb: (e: null, r: unknown) => void) => {
        handled.push(`Ping ${String(call.request['text'])}`);
        cb(null, { text: 'pong' });
      },
      GetShelf: (call: { request: Record<string, unknown> }, cb: (e: null, r: unknown) => void) => {
        handled.push(`GetShelf ${String(call.request['name'])}`);
        libraryImplementation.GetShelf!(call as never, cb as never);
      },
    },
    setup: (entry) =>
      entry.useMiddleware(MiddlewareOrder.Guard, tokenGuard(['/test.v1.Library/Fail'], mode)),
  });
}

describe.each<Mode>(['sync', 'async'])(
  'a CallRejection from a %s middleware on gRPC and gateway calls',
  (mode) => {
    it('ends a gRPC call with its code, message and headers; the handler does not run; the record and metrics say Unauthenticated', async () => {
      const handled: string[] = [];
      h = await start(handled, mode);
      const refused = await unary(h.client, 'Ping', { text: 'a' });
      expect([refused.error?.code, refused.error?.details]).toEqual([16, 'missing token']);
      expect(refused.error?.metadata.get('www-authenticate')).toEqual(['Bearer realm="library"']);
      // the meta headers still travel with the status
      expect(refused.error?.metadata.get('x-request-id')).toHaveLength(1);
      const md = new Metadata();
      md.set('authorization', 'Bearer t');
      const allowed = await unary(h.client, 'Ping', { text: 'b' }, md);
      expect(allowed.error).toBeUndefined();
      // on the ignore list: passes without a token, reaches its handler (which fails as asked)
      const ignored = await unary(h.client, 'Fail', { code: 5 });
      expect(ignored.error?.code).toBe(5);
      expect(handled).toEqual(['Ping b']);

      const metrics = await (await fetch(`${h.base}/metrics`)).text();
      expect(metrics).toMatch(
        /grpc_server_handled_total\{grpc_type="unary",grpc_service="test.v1.Library",grpc_method="Ping",grpc_code="Unauthenticated"\} 1/,
      );
      expect(metrics).toMatch(
        /grpc_server_handled_total\{grpc_type="unary",grpc_service="test.v1.Library",grpc_method="Ping",grpc_code="OK"\} 1/,
      );
      const requestId = String(refused.error?.metadata.get('x-request-id')[0]);
      const records = await h.stop();
      h = undefined;
      const rec = records.find(
        (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === requestId,
      );
      expect(rec).toMatchObject({ operation: '/test.v1.Library/Ping', resCode: 'Unauthenticated' });
    });

    it('answers a gateway call with 401, a google.rpc.Status body and its WWW-Authenticate; the handler does not run', async () => {
      const handled: string[] = [];
      h = await start(handled, mode);
      const refused = await fetch(`${h.base}/v1/shelves/s1`);
      expect([
        refused.status,
        refused.headers.get('www-authenticate'),
        refused.headers.get('content-type'),
        await refused.json(),
      ]).toEqual([
        401,
        'Bearer realm="library"',
        'application/json',
        { code: 16, message: 'missing token', details: [] },
      ]);
      const requestId = refused.headers.get('x-request-id');
      expect(requestId).toBeTruthy();
      const allowed = await fetch(`${h.base}/v1/shelves/s2`, {
        headers: { authorization: 'Bearer t' },
      });
      expect(allowed.status).toBe(200);
      await allowed.arrayBuffer();
      expect(handled).toEqual(['GetShelf shelves/s2']);
      const metrics = await (await fetch(`${h.base}/metrics`)).text();
      expect(metrics).toContain(
        'grpc_method="GetShelf",grpc_type="UnaryServer",rest_method="GET",rest_path="/v1/{name=shelves/*}",res_code="Unauthenticated"} 1',
      );
      const records = await h.stop();
      h = undefined;
      const rec = records.find(
        (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === requestId,
      );
      expect(rec).toMatchObject({ resCode: 'Unauthenticated' });
    });
  },
);

describe('a middleware that is still deciding, or that fails', () => {
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

  it('a before that throws something other than a CallRejection: INTERNAL / 500 with a generic message, the error in the record', async () => {
    const failing: CallMiddleware = {
      before: (call) => {
        if (call.headers.get('x-fail') !== undefined) throw new TypeError('SECRET bug in a guard');
      },
    };
    h = await startLibrary('', {
      setup: (entry) => entry.useMiddleware(MiddlewareOrder.Guard, failing),
    });
    const md = new Metadata();
    md.set('x-fail', '1');
    md.set('x-request-id', 'fail-grpc');
    const r = await unary(h.client, 'Ping', { text: 'a' }, md);
    expect([r.error?.code, r.error?.details]).toEqual([13, 'internal error']);
    const res = await fetch(`${h.base}/v1/shelves/s1`, {
      headers: { 'x-fail': '1', 'x-request-id': 'fail-gw' },
    });
    const text = await res.text();
    expect([res.status, text.includes('SECRET')]).toEqual([500, false]);
    const records = await h.stop();
    h = undefined;
    for (const id of ['fail-grpc', 'fail-gw']) {
      const rec = records.find(
        (x) => (x['ids'] as Record<string, string> | undefined)?.['requestId'] === id,
      );
      expect(rec).toMatchObject({ resCode: 'Internal' });
      expect(JSON.stringify(rec)).toContain('SECRET bug in a guard');
    }
  });
});
