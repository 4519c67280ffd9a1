import {
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPost, request, startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 point 3: client- and bidi-streaming over REST (grpc-gateway's generated streaming handlers).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

describe('streaming requests (client- and bidi-streaming request funcs)', () => {
  it('client streaming: the body is newline-delimited or concatenated JSON values, one message each; one JSON answer', async () => {
    const r = await request(
      c,
      'POST',
      '/v1/collect',
      '{"name":"a"}\n{"name":"b","amount":2}{"name":"c"}',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ nesteds: [{ name: 'a' }, { name: 'b', amount: 2 }, { name: 'c' }] });
  });

  it('client streaming: an empty body is a stream of no messages', async () => {
    const r = await request(c, 'POST', '/v1/collect', '');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({});
  });

  it('client-streaming-request-func: a value that does not decode → 400 InvalidArgument', async () => {
    const bad = await request(c, 'POST', '/v1/collect', '{"name":"a"}\n{"name":5}');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 3 });
    expect((await request(c, 'POST', '/v1/collect', '{"name":')).status).toBe(400);
  });

  it('examples/internal/integration TestFlowCombination StreamEmptyRpc: a client-streaming rule with no body reads the body as the stream', async () => {
    const r = await request(c, 'POST', '/v1/collect/nobody', '{"name":"a"}\n{"name":"b"}');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ nesteds: [{ name: 'a' }, { name: 'b' }] });
    const empty = await request(c, 'POST', '/v1/collect/nobody', '');
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({});
  });

  it('examples/internal/integration TestFlowCombination StreamEmptyStream: a bidi rule with no body, each message answered', async () => {
    const r = await request(c, 'POST', '/v1/chat/nobody', '{"name":"a"}{"name":"b"}');
    expect(r.status).toBe(200);
    expect(lines(r.text)).toEqual([
      { result: { name: 'a', amount: 1 } },
      { result: { name: 'b', amount: 1 } },
    ]);
  });

  it('bidi streaming: each message answered as it arrives, as {"result":…} lines', async () => {
    const r = await request(c, 'POST', '/v1/chat', '{"name":"a"}\n{"name":"b","amount":1}\n');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/x-ndjson');
    expect(lines(r.text)).toEqual([
      { result: { name: 'a', amount: 1 } },
      { result: { name: 'b', amount: 2 } },
    ]);
  });

  it('examples/internal/integration testABEBulkEchoZeroLength: an empty chunked body gives 200 with no items', async () => {
    const r = await request(c, 'POST', '/v1/chat', undefined, { 'transfer-encoding': 'chunked' });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
  });

  it('bidi streaming: responses are written while the request is still open', async () => {
    const got: unknown[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = openPost(
        c,
        '/v1/chat',
        { 'transfer-encoding': 'chunked' },
        (res) => {
          let buf = '';
          res.on('data', (d: Buffer) => {
            buf += d.toString();
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              got.push(JSON.parse(buf.slice(0, nl)));
              buf = buf.slice(nl + 1);
              // The first answer came before the second message was sent.
              if (got.length === 1) req.end('{"name":"second"}\n');
            }
          });
          res.on('end', () => resolve());
        },
        reject,
      );
      req.write('{"name":"first"}\n');
    });
    expect(got).toEqual([
      { result: { name: 'first', amount: 1 } },
      { result: { name: 'second', amount: 1 } },
    ]);
  });

  it('bidi-streaming-request-func: a value that does not decode ends the request stream (CloseSend); what came before is answered', async () => {
    const r = await request(c, 'POST', '/v1/chat', '{"name":"a"}\n{"name":5}\n{"name":"b"}\n');
    expect(r.status).toBe(200);
    expect(lines(r.text)).toEqual([{ result: { name: 'a', amount: 1 } }]);
  });

  it('runtime/handler.go handleForwardResponseStreamError: a handler error mid-stream ends it with an {"error":…} line', async () => {
    const r = await request(c, 'POST', '/v1/chat', '{"name":"a"}\n{"name":"fail"}\n{"name":"b"}\n');
    expect(r.status).toBe(200);
    const got = lines(r.text);
    expect(got[0]).toEqual({ result: { name: 'a', amount: 1 } });
    expect(got.at(-1)).toEqual({ error: { code: 9, message: 'asked to fail', details: [] } });
  });

  it('streamed requests go through the user interceptors (entry.addInterceptor): each message rewritten, refusals before the handler', async () => {
    const interceptor: ServerInterceptor = (_desc, call) =>
      new ServerInterceptingCall(
        call,
        new ResponderBuilder()
          .withStart((next) => {
            next(
              new ServerListenerBuilder()
                .withOnReceiveMetadata((md, mdNext) => {
                  if (md.get('x-deny').length > 0) {
                    call.sendStatus({ code: status.UNAUTHENTICATED, details: 'denied' });
                    return;
                  }
                  mdNext(md);
                })
                .withOnReceiveMessage((msg: Record<string, unknown>, msgNext) =>
                  msgNext({ ...msg, name: `${String(msg['name'])}!` }),
                )
                .build(),
            );
          })
          .build(),
      );
    const d = await startConformance('', (entry) => entry.addInterceptor(interceptor));
    try {
      const collected = await request(d, 'POST', '/v1/collect', '{"name":"a"}{"name":"b"}');
      expect(collected.status, collected.text).toBe(200);
      expect(collected.json).toEqual({ nesteds: [{ name: 'a!' }, { name: 'b!' }] });
      const chat = await request(d, 'POST', '/v1/chat', '{"name":"a"}\n{"name":"b"}\n');
      expect(lines(chat.text)).toEqual([
        { result: { name: 'a!', amount: 1 } },
        { result: { name: 'b!', amount: 1 } },
      ]);
      const failing = await request(d, 'POST', '/v1/chat', '{"name":"fail"}\n');
      expect(failing.status).toBe(400);
      expect(failing.json).toMatchObject({ code: 9 });
      const denied = await request(d, 'POST', '/v1/collect', '{"name":"a"}', {
        'grpc-metadata-x-deny': '1',
      });
      expect(denied.status).toBe(401);
      expect(denied.json).toEqual({ code: 16, message: 'denied', details: [] });
      const empty = await request(d, 'POST', '/v1/chat', '');
      expect(empty.status).toBe(200);
      expect(empty.text).toBe('');
    } finally {
      await d.stop();
    }
  });
});
