import {
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from '../../grpc-server/src/test-support/harness.js';

/** What the interceptor saw: the method and the caller's X-Tenant. */
const seen: Array<{ path: string; tenant: string }> = [];
let handled = 0;

/**
 * A typical user interceptor: reads request metadata, refuses calls that say `x-deny` with
 * Unauthenticated (before the handler), rewrites Ping's request text, and adds response metadata.
 */
const interceptor: ServerInterceptor = (desc, call) =>
  new ServerInterceptingCall(
    call,
    new ResponderBuilder()
      .withStart((next) => {
        next(
          new ServerListenerBuilder()
            .withOnReceiveMetadata((md, mdNext) => {
              seen.push({ path: desc.path, tenant: String(md.get('x-tenant')[0] ?? '') });
              if (md.get('x-deny').length > 0) {
                call.sendStatus({
                  code: status.UNAUTHENTICATED,
                  details: 'denied by the interceptor',
                });
                return;
              }
              mdNext(md);
            })
            .withOnReceiveMessage((msg: Record<string, unknown>, msgNext) =>
              msgNext(
                desc.path.endsWith('/Ping') ? { ...msg, text: `${String(msg['text'])}!` } : msg,
              ),
            )
            .build(),
        );
      })
      .withSendMetadata((md, mdNext) => {
        md.set('x-intercepted', 'yes');
        mdNext(md);
      })
      .build(),
  );

describe('user interceptors on gateway calls (entry.addInterceptor)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    enableSvcGwOption: true\n', {
      setup: (entry) => entry.addInterceptor(interceptor),
      overrides: {
        Ping: (
          call: { request: Record<string, unknown> },
          cb: (err: unknown, value?: unknown) => void,
        ) => {
          handled++;
          cb(null, { text: `pong ${String(call.request['text'])}` });
        },
      },
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('runs a unary gateway call through them: metadata in, rewritten request, response metadata out', async () => {
    seen.length = 0;
    const res = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'x-tenant': 't1', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'a' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ text: 'pong a!' });
    expect(res.headers.get('x-intercepted')).toBe('yes');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(seen).toEqual([{ path: '/test.v1.Library/Ping', tenant: 't1' }]);
  });

  it('answers a call an interceptor refuses with its status, without calling the handler', async () => {
    const before = handled;
    const res = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'x-deny': '1', 'content-type': 'application/json' },
      body: '{"text":"b"}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      code: 16,
      message: 'denied by the interceptor',
      details: [],
    });
    expect(handled).toBe(before);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('runs a server-streaming gateway call through them', async () => {
    seen.length = 0;
    const res = await fetch(`${h.base}/v1/shelves/s1/books?count=2`, {
      headers: { 'x-tenant': 't2' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-intercepted')).toBe('yes');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { result: { id: string } });
    expect(lines.map((l) => l.result.id)).toEqual(['b0', 'b1']);
    expect(seen).toEqual([{ path: '/test.v1.Library/ListBooks', tenant: 't2' }]);
  });

  it('maps a handler failure that passes back through them as before', async () => {
    const res = await fetch(`${h.base}/v1/fail/5`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 5, message: 'failed with 5', details: [] });
  });

  it('still runs them on gRPC calls, and writes a record per gateway call with its result code', async () => {
    seen.length = 0;
    const r = await unary(h.client, 'Ping', { text: 'g' });
    expect(r.response).toEqual({ text: 'pong g!' });
    expect(seen.map((s) => s.path)).toEqual(['/test.v1.Library/Ping']);
    const records = await h.stop();
    const gateway = records.filter(
      (rec) => (rec['payloads'] as Record<string, string> | undefined)?.['gwMethod'],
    );
    expect(gateway.map((rec) => rec['resCode'])).toEqual(
      expect.arrayContaining(['OK', 'Unauthenticated', 'NotFound']),
    );
    expect(gateway.map((rec) => rec['operation'])).toEqual(
      expect.arrayContaining([
        '/test.v1.Library/Ping',
        '/test.v1.Library/ListBooks',
        '/test.v1.Library/Fail',
      ]),
    );
  });
});
