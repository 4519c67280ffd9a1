import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { CallRejection, type CallContext, type CallMiddleware } from '@svcboot/entry-core';
import { CallChain } from '@svcboot/entry-core/call';
import { afterEach, describe, expect, it } from 'vitest';
import { callMiddleware } from './call-adapter.js';

/**
 * entry-http's koa adapter on its own (`callMiddleware` on a plain Koa app, no entry): a refusal
 * from a synchronous or asynchronous before is answered without the handler and the afters still
 * run. The same through an entry, on every transport, is checked by tools/conformance.
 */

/** The google error model's body (the default), any request id. */
function googleError(code: number, status: string, message: string): unknown {
  return {
    error: {
      code,
      status,
      message,
      details: [
        { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: expect.any(String) },
      ],
    },
  };
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** A guard that refuses calls without a token, and a middleware that sees every call's end. */
function serve(seen: string[], mode: 'sync' | 'async'): Promise<string> {
  const check = (call: CallContext): void => {
    if (call.headers.get('authorization') === undefined)
      throw new CallRejection('Unauthenticated', 'missing token', {
        'WWW-Authenticate': 'Bearer',
      });
  };
  const guard: CallMiddleware =
    mode === 'sync'
      ? { before: check }
      : {
          before: (call) =>
            new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => check(call)),
        };
  const observer: CallMiddleware = {
    after: (call) => void seen.push(`${call.info.operation} ${call.resCode}`),
  };
  const app = new Koa();
  app.use(callMiddleware(new CallChain([observer, guard])));
  app.use((ctx) => {
    ctx.body = { handled: true };
  });
  const server = http.createServer(app.callback());
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

describe.each(['sync', 'async'] as const)(
  'a CallRejection from a %s middleware on an httpserver call',
  (mode) => {
    it('answers its HTTP status, headers and an error body without running the handler; the afters still run', async () => {
      const seen: string[] = [];
      const base = await serve(seen, mode);
      const refused = await fetch(`${base}/v1/secret`);
      expect([
        refused.status,
        refused.headers.get('www-authenticate'),
        await refused.json(),
      ]).toEqual([401, 'Bearer', googleError(401, 'UNAUTHENTICATED', 'missing token')]);
      const allowed = await fetch(`${base}/v1/secret`, { headers: { authorization: 'Bearer x' } });
      expect([allowed.status, await allowed.json()]).toEqual([200, { handled: true }]);
      expect(seen).toEqual(['GET /v1/secret 401', 'GET /v1/secret 200']);
    });
  },
);
