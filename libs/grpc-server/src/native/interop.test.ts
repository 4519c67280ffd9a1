/**
 * gRPC's interop test cases a server can be tested on (grpc/grpc doc/interop-test-descriptions.md),
 * each driven by a grpc-js client against the node:http2 server hosting grpc.testing.TestService,
 * and the same cases against grpc-js's own Server, for parity. (Today's svcboot grpc entry cannot
 * serve this service: its descriptor pipeline, protobufjs, rejects messages.proto with "duplicate
 * name 'RpcsByPeer' in Type LoadBalancerStatsResponse", from .proto files or a buf-built set.)
 * The sizes, codes, messages and metadata asserted are the document's.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InteropMethod,
  dispatchInterop,
  interopMethods,
  loadInteropRoot,
} from './test-support/interop-service.js';
import {
  frame,
  interopClients,
  rawCall,
  type Running,
  startNative,
  statusOf,
  unary,
} from './test-support/harness.js';
import { startGrpcJsInterop } from './test-support/interop-grpc-js.js';

interface PayloadOut {
  body?: Buffer;
}
interface SimpleResponse {
  payload?: PayloadOut;
}
interface StreamingOutputCallResponse {
  payload?: PayloadOut;
}

const zeros = (n: number) => Buffer.alloc(n);
const allZero = (b: Buffer | undefined) => b?.every((x) => x === 0) === true;

function collect<T>(
  call: grpc.ClientReadableStream<T>,
): Promise<{ messages: T[]; status: grpc.StatusObject }> {
  return new Promise((resolve) => {
    const messages: T[] = [];
    call.on('data', (m: T) => messages.push(m));
    call.on('error', () => undefined);
    call.on('status', (status: grpc.StatusObject) => resolve({ messages, status }));
  });
}

function duplex<Req, Res>(
  c: grpc.Client,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
) {
  const fn = (
    c as unknown as Record<
      string,
      (md: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientDuplexStream<Req, Res>
    >
  )['fullDuplexCall']!;
  return fn.call(c, metadata, options);
}

function streamingInput<Res>(
  c: grpc.Client,
  metadata = new grpc.Metadata(),
): {
  call: grpc.ClientWritableStream<unknown>;
  done: Promise<{ error: grpc.ServiceError | null; response: Res | undefined }>;
} {
  let call!: grpc.ClientWritableStream<unknown>;
  const done = new Promise<{ error: grpc.ServiceError | null; response: Res | undefined }>(
    (resolve) => {
      const fn = (
        c as unknown as Record<string, (...a: unknown[]) => grpc.ClientWritableStream<unknown>>
      )['streamingInputCall']!;
      call = fn.call(c, metadata, (error: grpc.ServiceError | null, response: Res) =>
        resolve({ error, response }),
      );
    },
  );
  return { call, done };
}

interface Target {
  readonly name: string;
  start(): Promise<{ port: number; close(): Promise<void> }>;
  /** CompressedRequest and CompressedResponse (grpc-js's server has neither). */
  readonly compression: boolean;
}

const targets: Target[] = [
  {
    name: 'the node:http2 server',
    start: async () => {
      const s: Running<InteropMethod> = await startNative(interopMethods(), dispatchInterop, {
        // Responses are compressed only where a request asks (CompressedResponse).
        sendEncoding: 'gzip',
        compressMinBytes: Number.MAX_SAFE_INTEGER,
      });
      return s;
    },
    compression: true,
  },
  { name: "grpc-js's Server", start: startGrpcJsInterop, compression: false },
];

describe.each(targets)('gRPC interop cases against $name (grpc-js client)', (target) => {
  let server: { port: number; close(): Promise<void> };
  let client: grpc.Client;
  let gzipClient: grpc.Client;
  let unimplemented: grpc.Client;
  const withCompression = target.compression ? it : it.skip;

  beforeAll(async () => {
    server = await target.start();
    const { TestService, UnimplementedService } = interopClients();
    const address = `127.0.0.1:${server.port}`;
    const insecure = grpc.credentials.createInsecure();
    client = new TestService(address, insecure);
    gzipClient = new TestService(address, insecure, { 'grpc.default_compression_algorithm': 2 });
    unimplemented = new UnimplementedService(address, insecure);
  });

  afterAll(async () => {
    for (const c of [client, gzipClient, unimplemented]) c?.close();
    await server?.close();
  });

  it('empty_unary: an empty request gets an empty response', async () => {
    const r = await unary<object>(client, 'emptyCall', {});
    expect(r.error).toBeNull();
    expect(r.response).toEqual({});
  });

  it('large_unary: 271828 bytes of zeros in, 314159 bytes of zeros out', async () => {
    const r = await unary<SimpleResponse>(client, 'unaryCall', {
      responseSize: 314159,
      payload: { body: zeros(271828) },
    });
    expect(r.error).toBeNull();
    expect(r.response?.payload?.body?.length).toBe(314159);
    expect(allZero(r.response?.payload?.body)).toBe(true);
  });

  withCompression(
    'client_compressed_unary: the uncompressed probe fails INVALID_ARGUMENT; compressed and uncompressed calls succeed',
    async () => {
      const request = (expect_: boolean) => ({
        expectCompressed: { value: expect_ },
        responseSize: 314159,
        payload: { body: zeros(271828) },
      });
      const probe = await unary<SimpleResponse>(client, 'unaryCall', request(true));
      expect(probe.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
      const compressed = await unary<SimpleResponse>(gzipClient, 'unaryCall', request(true));
      expect(compressed.error).toBeNull();
      expect(compressed.response?.payload?.body?.length).toBe(314159);
      const plain = await unary<SimpleResponse>(client, 'unaryCall', request(false));
      expect(plain.error).toBeNull();
      expect(plain.response?.payload?.body?.length).toBe(314159);
    },
  );

  withCompression(
    'server_compressed_unary: the response carries the compressed flag exactly when response_compressed is true',
    async () => {
      for (const compressed of [true, false]) {
        const r = await unary<SimpleResponse>(client, 'unaryCall', {
          responseCompressed: { value: compressed },
          responseSize: 314159,
          payload: { body: zeros(271828) },
        });
        expect(r.error).toBeNull();
        expect(r.response?.payload?.body?.length).toBe(314159);
      }
      // grpc-js does not show a message's flag: read it off the wire.
      const root = loadInteropRoot();
      const Req = root.lookupType('grpc.testing.SimpleRequest');
      const Res = root.lookupType('grpc.testing.SimpleResponse');
      for (const compressed of [true, false]) {
        const body = Req.encode({
          responseCompressed: { value: compressed },
          responseSize: 314159,
          payload: { body: zeros(271828) },
        }).finish();
        const raw = await rawCall(server.port, '/grpc.testing.TestService/UnaryCall', frame(body), {
          'grpc-accept-encoding': 'identity,deflate,gzip',
        });
        expect(statusOf(raw).code).toBe('0');
        expect(raw.frames.map((f) => f.compressed)).toEqual([compressed]);
        const { gunzipSync } = await import('node:zlib');
        const message = compressed ? gunzipSync(raw.frames[0]!.data) : raw.frames[0]!.data;
        const decoded = Res.toObject(Res.decode(message)) as SimpleResponse;
        expect(decoded.payload?.body?.length).toBe(314159);
      }
    },
  );

  it('client_streaming: 27182, 8, 1828 and 45904 bytes aggregate to 74922', async () => {
    const { call, done } = streamingInput<{ aggregatedPayloadSize?: number }>(client);
    for (const n of [27182, 8, 1828, 45904]) call.write({ payload: { body: zeros(n) } });
    call.end();
    const r = await done;
    expect(r.error).toBeNull();
    expect(r.response?.aggregatedPayloadSize).toBe(74922);
  });

  withCompression(
    'client_compressed_streaming: the uncompressed probe fails INVALID_ARGUMENT; one compressed and one uncompressed message aggregate to 73086',
    async () => {
      const probe = streamingInput<{ aggregatedPayloadSize?: number }>(client);
      probe.call.write({ expectCompressed: { value: true }, payload: { body: zeros(27182) } });
      probe.call.end();
      expect((await probe.done).error?.code).toBe(grpc.status.INVALID_ARGUMENT);

      const { call, done } = streamingInput<{ aggregatedPayloadSize?: number }>(gzipClient);
      call.write({ expectCompressed: { value: true }, payload: { body: zeros(27182) } });
      // Write flag 2: grpc-js's NoCompress, this one message goes uncompressed.
      call.write(
        { expectCompressed: { value: false }, payload: { body: zeros(45904) } },
        2 as unknown as BufferEncoding,
      );
      call.end();
      const r = await done;
      expect(r.error).toBeNull();
      expect(r.response?.aggregatedPayloadSize).toBe(73086);
    },
  );

  it('server_streaming: four responses of 31415, 9, 2653 and 58979 bytes', async () => {
    const fn = (
      client as unknown as Record<
        string,
        (r: unknown) => grpc.ClientReadableStream<StreamingOutputCallResponse>
      >
    )['streamingOutputCall']!;
    const { messages, status } = await collect(
      fn.call(client, { responseParameters: [31415, 9, 2653, 58979].map((size) => ({ size })) }),
    );
    expect(status.code).toBe(grpc.status.OK);
    expect(messages.map((m) => m.payload?.body?.length)).toEqual([31415, 9, 2653, 58979]);
    expect(messages.every((m) => allZero(m.payload?.body))).toBe(true);
  });

  withCompression(
    'server_compressed_streaming: 31415 bytes compressed, then 92653 not',
    async () => {
      const root = loadInteropRoot();
      const Req = root.lookupType('grpc.testing.StreamingOutputCallRequest');
      const body = Req.encode({
        responseParameters: [
          { compressed: { value: true }, size: 31415 },
          { compressed: { value: false }, size: 92653 },
        ],
      }).finish();
      const raw = await rawCall(
        server.port,
        '/grpc.testing.TestService/StreamingOutputCall',
        frame(body),
        {
          'grpc-accept-encoding': 'identity,deflate,gzip',
        },
      );
      expect(statusOf(raw).code).toBe('0');
      expect(raw.frames.map((f) => f.compressed)).toEqual([true, false]);
      // And a grpc-js client reads both.
      const fn = (
        client as unknown as Record<
          string,
          (r: unknown) => grpc.ClientReadableStream<StreamingOutputCallResponse>
        >
      )['streamingOutputCall']!;
      const { messages, status } = await collect(
        fn.call(client, {
          responseParameters: [
            { compressed: { value: true }, size: 31415 },
            { compressed: { value: false }, size: 92653 },
          ],
        }),
      );
      expect(status.code).toBe(grpc.status.OK);
      expect(messages.map((m) => m.payload?.body?.length)).toEqual([31415, 92653]);
    },
  );

  it('ping_pong: four requests each answered before the next is sent', async () => {
    const call = duplex<unknown, StreamingOutputCallResponse>(client);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    const sizes: number[] = [];
    const pairs = [
      [31415, 27182],
      [9, 8],
      [2653, 1828],
      [58979, 45904],
    ] as const;
    for (const [size, body] of pairs) {
      const reply = new Promise<StreamingOutputCallResponse>((resolve) =>
        call.once('data', resolve),
      );
      call.write({ responseParameters: [{ size }], payload: { body: zeros(body) } });
      sizes.push((await reply).payload?.body?.length ?? -1);
    }
    call.end();
    expect((await status).code).toBe(grpc.status.OK);
    expect(sizes).toEqual([31415, 9, 2653, 58979]);
  });

  it('empty_stream: a bidi call half-closed at once ends OK with no response', async () => {
    const call = duplex<unknown, StreamingOutputCallResponse>(client);
    const result = collect(call);
    call.end();
    const { messages, status } = await result;
    expect(status.code).toBe(grpc.status.OK);
    expect(messages).toEqual([]);
  });

  it('status_code_and_message: code 2 and "test status message" come back on UnaryCall and FullDuplexCall', async () => {
    const responseStatus = { code: 2, message: 'test status message' };
    const r = await unary<SimpleResponse>(client, 'unaryCall', { responseStatus });
    expect(r.error?.code).toBe(2);
    expect(r.error?.details).toBe('test status message');
    const call = duplex<unknown, StreamingOutputCallResponse>(client);
    const result = collect(call);
    call.write({ responseStatus });
    call.end();
    const { status } = await result;
    expect(status.code).toBe(2);
    expect(status.details).toBe('test status message');
  });

  it('special_status_message: whitespace, BMP and non-BMP characters survive', async () => {
    const message = '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n';
    const r = await unary<SimpleResponse>(client, 'unaryCall', {
      responseStatus: { code: 2, message },
    });
    expect(r.error?.code).toBe(2);
    expect(r.error?.details).toBe(message);
  });

  it('custom_metadata: the initial value is echoed in headers and the binary one in trailers, on UnaryCall and FullDuplexCall', async () => {
    const md = () => {
      const m = new grpc.Metadata();
      m.set('x-grpc-test-echo-initial', 'test_initial_metadata_value');
      m.set('x-grpc-test-echo-trailing-bin', Buffer.from([0xab, 0xab, 0xab]));
      return m;
    };
    const r = await unary<SimpleResponse>(
      client,
      'unaryCall',
      { responseSize: 314159, payload: { body: zeros(271828) } },
      md(),
    );
    expect(r.error).toBeNull();
    expect(r.headers?.get('x-grpc-test-echo-initial')).toEqual(['test_initial_metadata_value']);
    expect(r.trailers?.get('x-grpc-test-echo-trailing-bin')).toEqual([
      Buffer.from([0xab, 0xab, 0xab]),
    ]);

    const call = duplex<unknown, StreamingOutputCallResponse>(client, md());
    const headers = new Promise<grpc.Metadata>((resolve) => call.on('metadata', resolve));
    const result = collect(call);
    call.write({ responseParameters: [{ size: 314159 }], payload: { body: zeros(271828) } });
    call.end();
    const { status, messages } = await result;
    expect(status.code).toBe(grpc.status.OK);
    expect(messages.map((m) => m.payload?.body?.length)).toEqual([314159]);
    expect((await headers).get('x-grpc-test-echo-initial')).toEqual([
      'test_initial_metadata_value',
    ]);
    expect(status.metadata.get('x-grpc-test-echo-trailing-bin')).toEqual([
      Buffer.from([0xab, 0xab, 0xab]),
    ]);
  });

  it('unimplemented_method: TestService/UnimplementedCall answers UNIMPLEMENTED', async () => {
    const r = await unary<object>(client, 'unimplementedCall', {});
    expect(r.error?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('unimplemented_service: UnimplementedService/UnimplementedCall answers UNIMPLEMENTED', async () => {
    const r = await unary<object>(unimplemented, 'unimplementedCall', {});
    expect(r.error?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('cancel_after_begin: a client stream cancelled before any message ends CANCELLED', async () => {
    const { call, done } = streamingInput<object>(client);
    call.cancel();
    expect((await done).error?.code).toBe(grpc.status.CANCELLED);
  });

  it('cancel_after_first_response: a bidi call cancelled after its first response ends CANCELLED', async () => {
    const call = duplex<unknown, StreamingOutputCallResponse>(client);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined);
    const first = new Promise<StreamingOutputCallResponse>((resolve) => call.once('data', resolve));
    call.write({ responseParameters: [{ size: 31415 }], payload: { body: zeros(27182) } });
    expect((await first).payload?.body?.length).toBe(31415);
    call.cancel();
    expect((await status).code).toBe(grpc.status.CANCELLED);
  });

  it('timeout_on_sleeping_server: a bidi call with a 1 ms deadline ends DEADLINE_EXCEEDED', async () => {
    const call = duplex<unknown, StreamingOutputCallResponse>(client, new grpc.Metadata(), {
      deadline: Date.now() + 1,
    });
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined);
    call.write({ payload: { body: zeros(27182) } });
    expect((await status).code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });
});
