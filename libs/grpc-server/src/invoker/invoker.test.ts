import http2 from 'node:http2';
import {
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from '../test-support/harness.js';

/**
 * The method invoker as its wire adapters reach it (Connect and gRPC-Web on one entry, over real
 * HTTP/2 requests): the user's interceptors run on every call, a call's record has its protocol's
 * payloads and the client's own address (no header carries it any more), an unknown method is
 * Unimplemented and recorded, and the deadline of `grpc-timeout` ends a call the handler holds.
 */

const seen: string[] = [];
let handled = 0;
/** `CallInfo.answered` of each call the chain saw, by its operation. */
const answeredBy = new Map<string, boolean>();

/** Reads `x-tenant`, refuses `x-deny`, rewrites Ping's request, adds response metadata. */
const interceptor: ServerInterceptor = (desc, call) =>
  new ServerInterceptingCall(
    call,
    new ResponderBuilder()
      .withStart((next) => {
        next(
          new ServerListenerBuilder()
            .withOnReceiveMetadata((md, mdNext) => {
              seen.push(`${desc.path} ${String(md.get('x-tenant')[0] ?? '')}`);
              if (md.get('x-deny').length > 0) {
                call.sendStatus({ code: status.UNAUTHENTICATED, details: 'denied' });
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

/** PingRequest { text } (field 1) as proto bytes. */
function ping(text: string): Buffer {
  const t = Buffer.from(text);
  return Buffer.concat([Buffer.from([0x0a, t.length]), t]);
}

/** One gRPC message frame. */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

interface Answer {
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  /** The client's port on its side of the connection (the record's remoteAddr). */
  localPort: number;
}

/** One request on its own HTTP/2 connection (`open`: the request's body is sent, not ended). */
async function h2(
  base: string,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
  open = false,
): Promise<Answer> {
  const session = http2.connect(base);
  try {
    await new Promise<void>((resolve, reject) => {
      session.once('connect', () => resolve());
      session.once('error', reject);
    });
    const localPort = session.socket.localPort!;
    return await new Promise<Answer>((resolve, reject) => {
      const req = session.request({ ':method': 'POST', ...headers });
      let head: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.on('response', (h) => void (head = h));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve({ headers: head, body: Buffer.concat(chunks), localPort }));
      req.on('error', reject);
      if (open) req.write(body);
      else req.end(body);
    });
  } finally {
    session.close();
  }
}

/** gRPC-Web's trailer frame (the last of the body) as a map, with the frames before it. */
function webTrailers(body: Buffer): { messages: Buffer[]; trailers: Map<string, string> } {
  const messages: Buffer[] = [];
  const trailers = new Map<string, string>();
  for (let i = 0; i + 5 <= body.length; ) {
    const len = body.readUInt32BE(i + 1);
    const data = body.subarray(i + 5, i + 5 + len);
    if (body[i]! & 0x80)
      for (const line of data.toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers.set(line.slice(0, colon), line.slice(colon + 1));
      }
    else messages.push(data);
    i += 5 + len;
  }
  return { messages, trailers };
}

describe('the method invoker behind Connect and gRPC-Web', () => {
  let h: Harness;
  let records: Array<Record<string, unknown>> = [];
  const ports: Record<string, number> = {};
  beforeAll(async () => {
    h = await startLibrary(
      '    grpcWeb: { enabled: true }\n    connect: { enabled: true }\n    requestMessageTimeoutMs: 300\n',
      {
        setup: (entry) =>
          entry.addInterceptor(interceptor).useMiddleware('authn', {
            before(call) {
              answeredBy.set(call.info.operation, call.info.answered === true);
            },
          }),
        overrides: {
          Ping: (
            call: { request: Record<string, unknown> },
            cb: (err: unknown, value?: unknown) => void,
          ) => {
            handled++;
            cb(null, { text: `pong ${String(call.request['text'])}` });
          },
          // Never answers: the deadline ends it.
          GetShelf: () => undefined,
        },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('runs gRPC-Web calls through the user interceptors: metadata in, rewritten request, response metadata out', async () => {
    seen.length = 0;
    const a = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/grpc-web+proto',
        'x-tenant': 'web',
        'x-request-id': 'invoker-web',
        'x-user-agent': 'grpc-web-javascript/0.1',
      },
      frame(ping('w')),
    );
    ports['invoker-web'] = a.localPort;
    expect(a.headers['x-intercepted']).toBe('yes');
    const { messages, trailers } = webTrailers(a.body);
    expect(messages.map((m) => m.toString('latin1'))).toEqual([expect.stringContaining('pong w!')]);
    expect(trailers.get('grpc-status')).toBe('0');
    expect(seen).toEqual(['/test.v1.Library/Ping web']);
  });

  it('runs Connect calls through them too, and a refusal never reaches the handler', async () => {
    seen.length = 0;
    const a = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/proto',
        'connect-protocol-version': '1',
        'x-tenant': 'connect',
        'x-request-id': 'invoker-connect',
        'user-agent': 'connect-es/2',
      },
      ping('c'),
    );
    ports['invoker-connect'] = a.localPort;
    expect([a.headers[':status'], a.headers['x-intercepted']]).toEqual([200, 'yes']);
    expect(a.body.toString('latin1')).toContain('pong c!');
    const before = handled;
    const denied = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'x-deny': '1',
      },
      Buffer.from('{"text":"no"}'),
    );
    expect(denied.headers[':status']).toBe(401);
    expect(JSON.parse(denied.body.toString())).toEqual({
      code: 'unauthenticated',
      message: 'denied',
    });
    expect(handled).toBe(before);
    expect(seen).toEqual(['/test.v1.Library/Ping connect', '/test.v1.Library/Ping ']);
  });

  it("answers a method the entry does not serve with grpc-js's Unimplemented", async () => {
    const a = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/Nope',
        'content-type': 'application/grpc-web+proto',
        'x-request-id': 'invoker-unknown',
      },
      frame(ping('x')),
    );
    expect([a.headers['grpc-status'], a.headers['grpc-message']]).toEqual([
      '12',
      'The%20server%20does%20not%20implement%20the%20method%20/test.v1.Library/Nope',
    ]);
    // Answered before the chain records it: marked so, so that load shedding neither queues nor
    // sheds it (a served method's calls are not).
    expect(answeredBy.get('unknown method')).toBe(true);
    expect([...answeredBy].filter(([op, answered]) => answered && op !== 'unknown method')).toEqual(
      [],
    );
    expect(answeredBy.size).toBeGreaterThan(1);
  });

  it('ends a call the handler holds at the deadline of grpc-timeout, with DeadlineExceeded', async () => {
    const a = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/GetShelf',
        'content-type': 'application/grpc-web+proto',
        'grpc-timeout': '100m',
        'x-request-id': 'invoker-deadline',
      },
      frame(Buffer.alloc(0)),
    );
    // grpc-message percent-encoded, as grpc-js sends it.
    expect([a.headers['grpc-status'], a.headers['grpc-message']]).toEqual([
      '4',
      'deadline%20exceeded',
    ]);
  });

  it('ends a call whose request message is not complete within requestMessageTimeoutMs', async () => {
    // A frame that says 10 bytes, 2 of them sent, and the request left open.
    const half = Buffer.from([0, 0, 0, 0, 10, 0x0a, 0x08]);
    const a = await h2(
      h.base,
      {
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/grpc-web+proto',
        'x-request-id': 'invoker-stalled',
      },
      half,
      true,
    );
    expect(a.headers['grpc-status']).toBe('4');
    expect(decodeURIComponent(String(a.headers['grpc-message']))).toBe(
      "the request message was not complete within 300 ms of the call's start (requestMessageTimeoutMs)",
    );
  });

  it("records each call with its protocol's payloads and the client's own address", async () => {
    records = await h.stop();
    const byId = (id: string): Record<string, unknown> | undefined =>
      records.find((r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === id);
    const web = byId('invoker-web');
    expect(web).toMatchObject({
      operation: '/test.v1.Library/Ping',
      resCode: 'OK',
      remoteAddr: `127.0.0.1:${ports['invoker-web']}`,
    });
    // SPEC.md 2.10: every key of the grpc entry's payloads, in order.
    expect(Object.entries(web?.['payloads'] as Record<string, string>)).toEqual([
      ['apiMethod', 'POST'],
      ['apiPath', '/test.v1.Library/Ping'],
      ['apiProtocol', 'gRPC-Web'],
      ['apiQuery', ''],
      ['grpcMethod', 'Ping'],
      ['grpcService', 'test.v1.Library'],
      ['grpcType', 'UnaryServer'],
      ['gwMethod', 'POST'],
      ['gwPath', '/test.v1.Library/Ping'],
      ['gwScheme', ''],
      ['gwUserAgent', ''],
      ['userAgent', 'grpc-web-javascript/0.1'],
    ]);
    const connect = byId('invoker-connect');
    expect(connect).toMatchObject({
      operation: '/test.v1.Library/Ping',
      resCode: 'OK',
      remoteAddr: `127.0.0.1:${ports['invoker-connect']}`,
    });
    expect(connect?.['payloads']).toMatchObject({
      apiProtocol: 'Connect',
      gwMethod: 'POST',
      gwPath: '/test.v1.Library/Ping',
      userAgent: 'connect-es/2',
    });
    expect(byId('invoker-unknown')).toMatchObject({
      operation: 'unknown method',
      resCode: 'Unimplemented',
      payloads: { apiPath: '/test.v1.Library/Nope', apiProtocol: 'gRPC-Web' },
    });
    expect(byId('invoker-stalled')).toMatchObject({ resCode: 'DeadlineExceeded' });
    expect(byId('invoker-deadline')).toMatchObject({
      operation: '/test.v1.Library/GetShelf',
      resCode: 'DeadlineExceeded',
    });
  });
});
