/**
 * The native adapter over an invoker: what reaches the invoker (start at the headers, messages,
 * half-close, cancel, fail, unknown paths) and what its sink writes (headers with middleware
 * pairs, messages with back-pressure, trailers-only status with pairs), with grpc-js clients.
 * The invoker here is a small stand-in that keeps the real one's contract (invoker/invoker.ts on
 * the invoker branch); the entry's own tests cover the real one once it is wired.
 */
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Invocation,
  type Invoker,
  type InvokerHead,
  type InvokerMethod,
  type InvokerSink,
  nativeServerOverInvoker,
} from './invoke-adapter.js';
import { frame, rawCall, rawUnary, statusOf } from './test-support/harness.js';

type Handler = (requests: Buffer[], sink: InvokerSink, head: InvokerHead) => void;

interface Method extends InvokerMethod {
  readonly handler: Handler;
}

const text = {
  requestDeserialize: (b: Buffer) => {
    if (b.toString() === 'undecodable') throw new Error('bad bytes');
    return b;
  },
  responseSerialize: (v: unknown) => v as Buffer,
};

const events: string[] = [];

/** The invoker's contract, small: unary checks, a refusing "middleware", its own deadline. */
class StandInInvoker implements Invoker<Method> {
  constructor(private readonly methods: Map<string, Method>) {}
  method(path: string) {
    return this.methods.get(path);
  }
  unknown(path: string) {
    events.push(`unknown ${path}`);
  }
  start(method: Method, head: InvokerHead, sink: InvokerSink): Invocation {
    events.push(`start ${method.path} ${head.protocol} deadline=${Number.isFinite(head.deadline)}`);
    let done = false;
    const finish = (s: Parameters<InvokerSink['status']>[0]) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sink.status(s);
    };
    const timer = Number.isFinite(head.deadline)
      ? setTimeout(
          () =>
            finish({ code: 4, details: 'deadline, as the invoker keeps it', trailers: undefined }),
          Math.max(0, head.deadline - Date.now()),
        )
      : undefined;
    if (head.headers['x-refuse'] !== undefined) {
      finish({
        code: 7,
        details: 'refused by a middleware',
        trailers: undefined,
        headers: ['x-mw', 'refused'],
      });
    }
    const requests: Buffer[] = [];
    return {
      send: (m) => {
        events.push(`send ${(m as Buffer).length}`);
        requests.push(m as Buffer);
        return true;
      },
      end: () => {
        events.push('end');
        if (done) return;
        // The sink may be a class instance (methods on its prototype): wrapped, not spread.
        method.handler(
          requests,
          {
            headers: (md, pairs) => sink.headers(md, pairs),
            message: (msg, done) => sink.message(msg, done),
            status: finish,
          },
          head,
        );
      },
      cancel: () => {
        events.push('cancel');
        done = true;
        clearTimeout(timer);
      },
      fail: (code, details) => {
        events.push(`fail ${code} ${details}`);
        finish({ code, details, trailers: undefined });
      },
    };
  }
}

const def = (requestStream: boolean, responseStream: boolean) => ({
  requestStream,
  responseStream,
  ...text,
});

const methods = new Map<string, Method>([
  [
    '/t.T/Echo',
    {
      path: '/t.T/Echo',
      definition: def(false, false),
      handler: (requests, sink) => {
        const md = new grpc.Metadata();
        md.set('x-handler', 'yes');
        sink.headers(md, ['x-mw', 'from-middleware']);
        sink.message(Buffer.concat(requests), () => undefined);
        sink.status({ code: 0, details: '', trailers: undefined });
      },
    },
  ],
  ['/t.T/Hold', { path: '/t.T/Hold', definition: def(false, false), handler: () => undefined }],
  [
    '/t.T/Many',
    {
      path: '/t.T/Many',
      definition: def(false, true),
      handler: (_requests, sink) => {
        let i = 0;
        const next = () => {
          if (i === 200) {
            sink.status({ code: 0, details: '', trailers: undefined });
            return;
          }
          i++;
          sink.message(Buffer.alloc(16 * 1024, i % 256), next);
        };
        next();
      },
    },
  ],
  [
    '/t.T/Sum',
    {
      path: '/t.T/Sum',
      definition: def(true, false),
      handler: (requests, sink) => {
        sink.message(
          Buffer.from(String(requests.reduce((n, r) => n + r.length, 0))),
          () => undefined,
        );
        sink.status({ code: 0, details: '', trailers: undefined });
      },
    },
  ],
]);

let h2: http2.Http2Server;
let port: number;
let client: grpc.Client;
const identity = (b: Buffer) => b;

beforeAll(async () => {
  const native = nativeServerOverInvoker(new StandInInvoker(methods), {
    maxReceiveMessageBytes: 1024,
  });
  h2 = native.createServer();
  await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
  port = (h2.address() as AddressInfo).port;
  client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  afterAll(async () => {
    client.close();
    const closed = new Promise<void>((resolve) => h2.close(() => resolve()));
    await native.shutdown(0);
    await closed;
  });
});

describe('native gRPC over an invoker', () => {
  it('starts the invocation at the headers, then feeds the message and half-close; headers carry the handler metadata and the middleware pairs', async () => {
    events.length = 0;
    const r = await rawUnary(client, '/t.T/Echo', Buffer.from('hello'));
    expect(r.error).toBeNull();
    expect(r.response?.toString()).toBe('hello');
    expect(r.headers?.get('x-handler')).toEqual(['yes']);
    expect(r.headers?.get('x-mw')).toEqual(['from-middleware']);
    expect(events).toEqual(['start /t.T/Echo HTTP/2 deadline=false', 'send 5', 'end']);
  });

  it('sends a refusal before any message as trailers-only, with the middleware header pairs', async () => {
    const r = await rawCall(port, '/t.T/Echo', frame(Buffer.from('x')), { 'x-refuse': '1' });
    expect(r.headers['grpc-status']).toBe('7');
    expect(r.headers['grpc-message']).toBe('refused by a middleware');
    expect(r.headers['x-mw']).toBe('refused');
    expect(r.trailers).toEqual({});
  });

  it('leaves the deadline to the invoker: its status is the one the client gets', async () => {
    const r = await rawUnary(client, '/t.T/Hold', Buffer.from('x'), new grpc.Metadata(), {
      deadline: Date.now() + 100,
    });
    expect(r.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const raw = await rawCall(port, '/t.T/Hold', frame(Buffer.from('x')), {
      'grpc-timeout': '50m',
    });
    expect(statusOf(raw)).toEqual({ code: '4', message: 'deadline, as the invoker keeps it' });
  });

  it('tells the invoker when the client cancels, and fails the invocation on a wire error or an undecodable message', async () => {
    events.length = 0;
    const call = client.makeUnaryRequest(
      '/t.T/Hold',
      identity,
      identity,
      Buffer.from('x'),
      () => undefined,
    );
    await waitFor('the held call', () => events.includes('end'));
    call.cancel();
    await waitFor('cancel', () => events.includes('cancel'));

    const tooBig = await rawUnary(client, '/t.T/Echo', Buffer.alloc(2000));
    expect(tooBig.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(events).toContain('fail 8 Received message larger than max (2000 vs. 1024)');

    const bad = await rawUnary(client, '/t.T/Echo', Buffer.from('undecodable'));
    expect(bad.error?.code).toBe(grpc.status.INTERNAL);
    expect(bad.error?.details).toBe('Error deserializing request');
  });

  it('answers an unknown path UNIMPLEMENTED and records it through invoker.unknown', async () => {
    events.length = 0;
    const r = await rawUnary(client, '/t.T/Missing', Buffer.from('x'));
    expect(r.error?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(events).toEqual(['unknown /t.T/Missing']);
  });

  it('streams both ways: sink messages wait for the wire (done), request messages reach send in order', async () => {
    const stream = client.makeServerStreamRequest(
      '/t.T/Many',
      identity,
      identity,
      Buffer.from('go'),
    );
    const received: Buffer[] = [];
    stream.on('data', (m: Buffer) => received.push(m));
    const status = await new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    expect(status.code).toBe(0);
    expect(received.length).toBe(200);
    expect(received.every((m, i) => m.length === 16 * 1024 && m[0] === (i + 1) % 256)).toBe(true);

    const sum = await new Promise<Buffer | undefined>((resolve, reject) => {
      const call = client.makeClientStreamRequest('/t.T/Sum', identity, identity, (err, res) =>
        err ? reject(err) : resolve(res),
      );
      for (const n of [1, 20, 300]) call.write(Buffer.alloc(n));
      call.end();
    });
    expect(sum?.toString()).toBe('321');
  });
});
