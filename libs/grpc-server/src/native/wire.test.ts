/**
 * The node:http2 gRPC server's wire protocol, call by call: framing, grpc-timeout and deadlines,
 * cancellation, trailers-only responses, status, message and details, metadata both ways, message
 * size limits, refusals. grpc-js clients where they can produce the case, node:http2 where not.
 */
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeCall } from './call.js';
import type { DroppedEntry } from './metadata.js';
import { decodeStatusMessage, encodeStatusMessage } from './status-message.js';
import {
  dispatchTest,
  frame,
  rawCall,
  rawUnary,
  type Running,
  startNative,
  statusOf,
  type TestMethod,
} from './test-support/harness.js';
import { parseGrpcTimeout } from './timeout.js';

type Call = NativeCall<TestMethod>;

/** The calls each method saw, newest last. */
const seen: Record<string, Call[]> = {};
const dropped: DroppedEntry[] = [];
const record = (name: string, call: Call) => (seen[name] ??= []).push(call);

const LIMIT = 64 * 1024;

const methods = new Map<string, TestMethod>([
  [
    '/t.T/Echo',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        record('Echo', call);
        call.send(call.request);
        call.end({ code: 0 });
      },
    },
  ],
  [
    // Never answers by itself: for deadlines, cancellation and shutdown.
    '/t.T/Hold',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => record('Hold', call),
    },
  ],
  [
    // The request is `code|message`; the answer that status, with details and trailers when asked.
    '/t.T/Fail',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        const [code, message, withMessage] = call.request.toString().split('|');
        if (withMessage === 'after-message') call.send(Buffer.from('partial'));
        const trailers = new grpc.Metadata();
        trailers.set('x-trailer', 'yes');
        call.end({
          code: Number(code),
          message,
          trailers,
          details: Buffer.from([8, 5, 0x12, 3, 0x61, 0x62, 0x63]),
        });
      },
    },
  ],
  [
    // Answers `n` bytes, n the decimal request.
    '/t.T/Big',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        call.send(Buffer.alloc(Number(call.request.toString())));
        call.end({ code: 0 });
      },
    },
  ],
  [
    // Metadata with a value Node would refuse and reserved names.
    '/t.T/BadMetadata',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        const headers = new grpc.Metadata();
        headers.set('x-good', 'fine');
        headers.set('x-bad', 'placeholder');
        // grpc-js's Metadata checks values on set; a value changed afterwards (or built by other
        // code) is what the server must survive.
        setRaw(headers, 'x-bad', 'line\r\nbreak');
        const trailers = new grpc.Metadata();
        trailers.set('grpc-status', '13');
        trailers.set('grpc-message', 'forged');
        trailers.set('content-type', 'text/plain');
        trailers.set('x-kept', 'kept');
        call.sendHeaders(headers);
        call.send(Buffer.from('ok'));
        call.end({ code: 0, trailers });
      },
    },
  ],
  [
    // Response headers as a middleware's flat pairs: x-pair set to the request's text.
    '/t.T/Pairs',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        call.sendHeaders(undefined, ['x-fixed', 'same', 'x-pair', call.request.toString('latin1')]);
        call.send(Buffer.from('ok'));
        call.end({ code: 0 });
      },
    },
  ],
  [
    '/t.T/Collect',
    {
      requestStream: true,
      responseStream: false,
      run: async (call) => {
        record('Collect', call);
        const parts: Buffer[] = [];
        for await (const m of call.messages()) parts.push(m);
        if (call.cancelled) return;
        call.send(Buffer.from(parts.map((p) => p.toString()).join(',')));
        call.end({ code: 0 });
      },
    },
  ],
]);

/** Overwrites a metadata value behind grpc-js's checks (what a buggy caller could hand over). */
function setRaw(md: grpc.Metadata, key: string, value: string): void {
  const repr = (md as unknown as { internalRepr: Map<string, Array<string | Buffer>> })
    .internalRepr;
  repr.set(key, [value]);
}

let server: Running<TestMethod>;
let client: grpc.Client;

beforeAll(async () => {
  server = await startNative(methods, dispatchTest, {
    maxReceiveMessageBytes: LIMIT,
    maxSendMessageBytes: LIMIT,
    onDroppedMetadata: (_path, entry) => dropped.push(entry),
  });
  client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.close();
});

describe('framing', () => {
  it('reads a message split into one-byte DATA frames, and several messages in one frame', async () => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      const req = session.request({
        ':method': 'POST',
        ':path': '/t.T/Echo',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      const chunks: Buffer[] = [];
      let trailers: http2.IncomingHttpHeaders = {};
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('trailers', (t) => (trailers = t));
      const bytes = frame(Buffer.from('split into single bytes'));
      for (const b of bytes) {
        await new Promise<void>((resolve) => req.write(Buffer.from([b]), () => resolve()));
      }
      req.end();
      await new Promise<void>((resolve) => req.once('close', () => resolve()));
      expect(trailers['grpc-status']).toBe('0');
      expect(Buffer.concat(chunks)).toEqual(frame(Buffer.from('split into single bytes')));
    } finally {
      session.close();
    }

    const joined = Buffer.concat(['a', 'bb', '', 'ccc'].map((s) => frame(Buffer.from(s))));
    const r = await rawCall(server.port, '/t.T/Collect', joined);
    expect(statusOf(r).code).toBe('0');
    expect(r.frames.map((f) => f.data.toString())).toEqual(['a,bb,,ccc']);
  });

  it('answers INTERNAL to a frame flag other than 0 or 1 and to a request that ends inside a message', async () => {
    const badFlag = frame(Buffer.from('x'));
    badFlag[0] = 2;
    expect(statusOf(await rawCall(server.port, '/t.T/Echo', badFlag)).code).toBe(
      String(grpc.status.INTERNAL),
    );
    const truncated = frame(Buffer.from('truncated')).subarray(0, 8);
    expect(statusOf(await rawCall(server.port, '/t.T/Echo', truncated)).code).toBe(
      String(grpc.status.INTERNAL),
    );
  });

  it('answers UNIMPLEMENTED to a unary call with no request message or with two (as grpc-js)', async () => {
    const none = await rawCall(server.port, '/t.T/Echo', Buffer.alloc(0));
    expect(statusOf(none).code).toBe(String(grpc.status.UNIMPLEMENTED));
    const two = await rawCall(server.port, '/t.T/Echo', [
      frame(Buffer.from('1')),
      frame(Buffer.from('2')),
    ]);
    expect(statusOf(two).code).toBe(String(grpc.status.UNIMPLEMENTED));
  });

  it('answers 415 to a content type that is not gRPC and UNIMPLEMENTED (trailers-only) to an unknown method', async () => {
    const wrongType = await rawCall(server.port, '/t.T/Echo', frame(Buffer.from('x')), {
      'content-type': 'application/json',
    });
    expect(wrongType.headers[':status']).toBe(415);
    const unknown = await rawCall(server.port, '/t.T/Nope', frame(Buffer.from('x')));
    expect(unknown.headers[':status']).toBe(200);
    expect(unknown.headers['grpc-status']).toBe(String(grpc.status.UNIMPLEMENTED));
    expect(unknown.frames).toEqual([]);
  });
});

describe('grpc-timeout, deadlines and cancellation', () => {
  it('parses every unit of grpc-timeout and refuses values the spec does not allow', () => {
    // PROTOCOL-HTTP2.md: TimeoutValue is at most 8 digits; units H M S m u n.
    expect(parseGrpcTimeout('1H')).toBe(3_600_000);
    expect(parseGrpcTimeout('2M')).toBe(120_000);
    expect(parseGrpcTimeout('3S')).toBe(3_000);
    expect(parseGrpcTimeout('4m')).toBe(4);
    expect(parseGrpcTimeout('2500u')).toBe(3);
    expect(parseGrpcTimeout('1n')).toBe(1);
    expect(parseGrpcTimeout('99999999S')).toBe(99_999_999_000);
    expect(parseGrpcTimeout('123456789S')).toBeUndefined();
    expect(parseGrpcTimeout('1x')).toBeUndefined();
    expect(parseGrpcTimeout('S')).toBeUndefined();
    expect(parseGrpcTimeout('-1S')).toBeUndefined();
  });

  it('ends a call past its grpc-timeout with DEADLINE_EXCEEDED and aborts the handler signal', async () => {
    const before = seen['Hold']?.length ?? 0;
    const started = Date.now();
    // 1 s, not less: the handler must have started before the deadline for its signal to be
    // aborted (a call read after its deadline is refused at admission and no handler sees it,
    // as on a crowded machine a 100 ms deadline could be).
    const r = await rawCall(server.port, '/t.T/Hold', frame(Buffer.from('x')), {
      'grpc-timeout': '1000m',
    });
    expect(statusOf(r)).toEqual({
      code: String(grpc.status.DEADLINE_EXCEEDED),
      message: 'Deadline exceeded',
    });
    const call = seen['Hold']![before]!;
    expect(call.deadline).toBeGreaterThanOrEqual(started + 1000);
    expect(call.signal.aborted).toBe(true);
  });

  it('gives a grpc-js client its deadline, and answers INTERNAL to an invalid grpc-timeout', async () => {
    const r = await rawUnary(client, '/t.T/Hold', Buffer.from('x'), new grpc.Metadata(), {
      deadline: Date.now() + 150,
    });
    expect(r.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const invalid = await rawCall(server.port, '/t.T/Echo', frame(Buffer.from('x')), {
      'grpc-timeout': '1x',
    });
    expect(statusOf(invalid).code).toBe(String(grpc.status.INTERNAL));
    expect(statusOf(invalid).message).toBe('Invalid grpc-timeout value "1x"');
  });

  it('cancels the call when the client resets the stream (RST_STREAM), from grpc-js and raw', async () => {
    const before = seen['Hold']?.length ?? 0;
    const call = client.makeUnaryRequest(
      '/t.T/Hold',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from('x'),
      () => undefined,
    );
    const held = await waitFor('the held call', () => seen['Hold']?.[before]);
    const cancelled = new Promise<void>((resolve) => held.onCancel(() => resolve()));
    call.cancel();
    await cancelled;
    expect(held.cancelled).toBe(true);
    expect(held.signal.aborted).toBe(true);

    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      const req = session.request({
        ':method': 'POST',
        ':path': '/t.T/Hold',
        'content-type': 'application/grpc',
      });
      req.on('error', () => undefined);
      req.end(frame(Buffer.from('x')));
      const raw = await waitFor('the raw held call', () => seen['Hold']?.[before + 1]);
      const signalled = new Promise<void>((resolve) =>
        raw.signal.addEventListener('abort', () => resolve()),
      );
      req.close(http2.constants.NGHTTP2_CANCEL);
      await signalled;
      expect(raw.cancelled).toBe(true);
      // Answering a cancelled call does nothing and does not throw.
      raw.send(Buffer.from('late'));
      raw.end({ code: 0 });
    } finally {
      session.close();
    }
  });
});

describe('status, trailers-only responses, grpc-message and details', () => {
  it('answers an error with nothing sent as trailers-only: one HEADERS frame with the status', async () => {
    const r = await rawCall(server.port, '/t.T/Fail', frame(Buffer.from('5|not here')));
    expect(r.headers[':status']).toBe(200);
    expect(r.headers['content-type']).toBe('application/grpc');
    expect(r.headers['grpc-status']).toBe('5');
    expect(r.headers['grpc-message']).toBe('not here');
    expect(r.headers['x-trailer']).toBe('yes');
    expect(r.trailers).toEqual({});
    expect(r.frames).toEqual([]);
  });

  it('sends the status in trailers after a message', async () => {
    const r = await rawCall(server.port, '/t.T/Fail', frame(Buffer.from('9|late|after-message')));
    expect(r.headers['grpc-status']).toBeUndefined();
    expect(r.frames.map((f) => f.data.toString())).toEqual(['partial']);
    expect(r.trailers['grpc-status']).toBe('9');
    expect(r.trailers['grpc-message']).toBe('late');
  });

  it('percent-encodes grpc-message (non-printable ASCII, %, UTF-8) and a grpc-js client decodes it', async () => {
    const message = 'a%b\n\t ☺ 😈 end';
    // PROTOCOL-HTTP2.md: bytes outside 0x20-0x7E and '%' itself as %XX of the UTF-8 encoding.
    expect(encodeStatusMessage(message)).toBe('a%25b%0A%09 %E2%98%BA %F0%9F%98%88 end');
    expect(decodeStatusMessage(encodeStatusMessage(message))).toBe(message);
    expect(encodeStatusMessage('plain text')).toBe('plain text');

    const raw = await rawCall(server.port, '/t.T/Fail', frame(Buffer.from(`3|${message}`)));
    expect(raw.headers['grpc-message']).toBe('a%25b%0A%09 %E2%98%BA %F0%9F%98%88 end');
    const r = await rawUnary(client, '/t.T/Fail', Buffer.from(`3|${message}`));
    expect(r.error?.code).toBe(3);
    expect(r.error?.details).toBe(message);
  });

  it('sends grpc-status-details-bin and trailing metadata to a grpc-js client', async () => {
    const r = await rawUnary(client, '/t.T/Fail', Buffer.from('7|denied'));
    expect(r.error?.code).toBe(7);
    expect(r.error?.metadata.get('grpc-status-details-bin')).toEqual([
      Buffer.from([8, 5, 0x12, 3, 0x61, 0x62, 0x63]),
    ]);
    expect(r.error?.metadata.get('x-trailer')).toEqual(['yes']);
  });
});

describe('metadata', () => {
  it('hands a handler ASCII and binary metadata from a grpc-js client, without the protocol headers', async () => {
    const md = new grpc.Metadata();
    md.set('x-ascii', 'value one');
    md.add('x-bytes-bin', Buffer.from([0, 1, 2, 255]));
    md.add('x-bytes-bin', Buffer.from([9]));
    const before = seen['Echo']?.length ?? 0;
    const r = await rawUnary(client, '/t.T/Echo', Buffer.from('m'), md, {
      deadline: Date.now() + 10_000,
    });
    expect(r.error).toBeNull();
    const call = seen['Echo']![before]!;
    expect(call.metadata.get('x-ascii')).toEqual(['value one']);
    expect(call.metadata.get('x-bytes-bin')).toEqual([
      Buffer.from([0, 1, 2, 255]),
      Buffer.from([9]),
    ]);
    for (const reserved of [
      'grpc-timeout',
      'grpc-encoding',
      'grpc-accept-encoding',
      'te',
      'content-type',
      ':path',
      ':authority',
    ]) {
      expect(call.metadata.get(reserved), reserved).toEqual([]);
    }
    // grpc-js keeps user-agent in the metadata; so does this server.
    expect(String(call.metadata.get('user-agent')[0])).toMatch(/^grpc-node-js\//);
    expect(call.deadline).toBeLessThan(Date.now() + 10_000 + 1);
  });

  it('decodes -bin values padded or not and comma-joined, and keeps a repeated ASCII header comma-joined (as grpc-js)', async () => {
    const before = seen['Echo']?.length ?? 0;
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      const req = session.request({
        ':method': 'POST',
        ':path': '/t.T/Echo',
        'content-type': 'application/grpc',
        te: 'trailers',
        'x-padded-bin': 'AQI=',
        'x-unpadded-bin': 'AQI',
        'x-joined-bin': 'AQI=,AwQ, BQ',
        // Two header fields of the same name.
        'x-twice': ['first', 'second'],
      });
      req.on('data', () => undefined);
      req.end(frame(Buffer.from('m')));
      await new Promise<void>((resolve) => req.once('close', () => resolve()));
    } finally {
      session.close();
    }
    const call = seen['Echo']![before]!;
    expect(call.metadata.get('x-padded-bin')).toEqual([Buffer.from([1, 2])]);
    expect(call.metadata.get('x-unpadded-bin')).toEqual([Buffer.from([1, 2])]);
    expect(call.metadata.get('x-joined-bin')).toEqual([
      Buffer.from([1, 2]),
      Buffer.from([3, 4]),
      Buffer.from([5]),
    ]);
    expect(call.metadata.get('x-twice')).toEqual(['first, second']);
  });

  it('leaves out an outgoing value Node would refuse and reserved names, and still answers', async () => {
    dropped.length = 0;
    const r = await rawUnary(client, '/t.T/BadMetadata', Buffer.from('m'));
    expect(r.error).toBeNull();
    expect(r.response?.toString()).toBe('ok');
    expect(r.headers?.get('x-good')).toEqual(['fine']);
    expect(r.headers?.get('x-bad')).toEqual([]);
    expect(r.status?.code).toBe(0);
    expect(r.status?.details).toBe('');
    expect(r.status?.metadata.get('x-kept')).toEqual(['kept']);
    expect(dropped.map((d) => d.key).sort()).toEqual([
      'content-type',
      'grpc-message',
      'grpc-status',
      'x-bad',
    ]);
    // The server still serves.
    expect((await rawUnary(client, '/t.T/Echo', Buffer.from('after'))).response?.toString()).toBe(
      'after',
    );
  });
});

describe('middleware header pairs', () => {
  it('checks every value of a pair key: one found legal before does not let a later one through', async () => {
    dropped.length = 0;
    const values = ['plain', 'plain', 'line\r\nbreak', 'plain', 'caf\u00e9', 'other'];
    const seen: string[][] = [];
    for (const v of values) {
      const r = await rawUnary(client, '/t.T/Pairs', Buffer.from(v, 'latin1'));
      expect(r.error).toBeNull();
      expect(r.headers?.get('x-fixed')).toEqual(['same']);
      seen.push(r.headers?.get('x-pair').map(String) ?? []);
    }
    expect(seen).toEqual([['plain'], ['plain'], [], ['plain'], [], ['other']]);
    expect(dropped.map((d) => d.key)).toEqual(['x-pair', 'x-pair']);
  });
});

describe('message size limits', () => {
  it('answers RESOURCE_EXHAUSTED to a request message over the receive limit', async () => {
    const r = await rawUnary(client, '/t.T/Echo', Buffer.alloc(LIMIT + 1));
    expect(r.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(r.error?.details).toBe(`Received message larger than max (${LIMIT + 1} vs. ${LIMIT})`);
    const atLimit = await rawUnary(client, '/t.T/Echo', Buffer.alloc(LIMIT));
    expect(atLimit.error).toBeNull();
    expect(atLimit.response?.length).toBe(LIMIT);
  });

  it('ends a call with RESOURCE_EXHAUSTED when its response message is over the send limit', async () => {
    const r = await rawUnary(client, '/t.T/Big', Buffer.from(String(LIMIT + 1)));
    expect(r.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(r.error?.details).toBe(`Sent message larger than max (${LIMIT + 1} vs. ${LIMIT})`);
    const atLimit = await rawUnary(client, '/t.T/Big', Buffer.from(String(LIMIT)));
    expect(atLimit.response?.length).toBe(LIMIT);
  });
});
