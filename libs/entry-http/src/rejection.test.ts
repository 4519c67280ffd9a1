import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import {
  boot,
  CallChain,
  CallRejection,
  isIgnored,
  MiddlewareOrder,
  parseConsoleRecord,
  type CallContext,
  type CallMiddleware,
} from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { callMiddleware } from './call-adapter.js';
import { httpEntry } from './index.js';

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

describe('a middleware added with useMiddleware on an httpserver entry', () => {
  it('refuses calls without a token (401, WWW-Authenticate, error body), skips its ignore list, and the record and metrics say 401', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-reject-'));
    const events = path.join(dir, 'events.log');
    const app = await boot({
      argv: [],
      env: {},
      configText: [
        'app: { name: httpdemo, version: 1.2.3 }',
        'event:',
        `  - name: ev\n    outputPaths: ["${events}"]`,
        'httpserver:',
        '  - name: api',
        '    port: 0',
        '    host: 127.0.0.1',
        '    eventEntry: ev',
        '    prom: { enabled: true }',
        '    middleware: { logging: { enabled: true }, prom: { enabled: true }, meta: { enabled: true } }',
      ].join('\n'),
    });
    try {
      const handled: string[] = [];
      const entry = httpEntry(app, 'api');
      entry.router.get('/v1/secret', (ctx) => {
        handled.push('secret');
        ctx.body = { handled: true };
      });
      entry.router.get('/v1/public/hello', (ctx) => {
        handled.push('public');
        ctx.body = { handled: true };
      });
      const ignore = ['/v1/public/', '/metrics'];
      entry.useMiddleware(MiddlewareOrder.Guard, {
        before(call: CallContext) {
          if (isIgnored(ignore, call.info)) return;
          if (call.headers.get('authorization') === undefined)
            throw new CallRejection('Unauthenticated', 'missing token', {
              'WWW-Authenticate': 'Bearer realm="library"',
            });
        },
      });
      await app.bootstrap();
      const base = `http://127.0.0.1:${entry.port}`;
      const refused = await fetch(`${base}/v1/secret`);
      expect([
        refused.status,
        refused.headers.get('www-authenticate'),
        await refused.json(),
      ]).toEqual([
        401,
        'Bearer realm="library"',
        googleError(401, 'UNAUTHENTICATED', 'missing token'),
      ]);
      const requestId = refused.headers.get('x-request-id');
      const open = await fetch(`${base}/v1/public/hello`);
      expect(open.status).toBe(200);
      await open.arrayBuffer();
      expect(handled).toEqual(['public']);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      // Refused before routing: no route template, so rest_path is empty.
      expect(metrics).toMatch(
        /svc_call_res_code_total\{[^}]*rest_method="GET",rest_path="",res_code="401"\} 1/,
      );
      expect(() => entry.useMiddleware(MiddlewareOrder.Guard, {})).toThrow(/after bootstrap/);
      await app.shutdown();
      const recs = (await readFile(events, 'utf8'))
        .split(/(?<=\nEOE\n)/)
        .filter((c) => c.trim() !== '')
        .map((c) => Object.fromEntries(parseConsoleRecord(c)));
      const rec = recs.find((r) => (r['ids'] ?? '').includes(requestId ?? 'none'));
      expect(rec).toMatchObject({ operation: 'GET /v1/secret', resCode: '401' });
    } finally {
      await app.shutdown().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
