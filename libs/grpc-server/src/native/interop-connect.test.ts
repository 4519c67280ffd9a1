/**
 * The interop cases again with a second, independent client: connect-node's gRPC transport
 * (@connectrpc/connect-node `createGrpcTransport`), against the node:http2 server. The service's
 * descriptors come from the vendored protos compiled with buf. The sizes, codes, messages and
 * metadata asserted are doc/interop-test-descriptions.md's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFileRegistry, type DescService, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import {
  Code,
  ConnectError,
  type Client,
  createClient,
  decodeBinaryHeader,
  encodeBinaryHeader,
} from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { bufBinary } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Running, startNative } from './test-support/harness.js';
import {
  dispatchInterop,
  type InteropMethod,
  interopMethods,
  TESTDATA,
} from './test-support/interop-service.js';

interface Payload {
  body: Uint8Array;
}
interface Responses {
  payload?: Payload;
}
/** The client's methods as this test calls them (the registry's service has no generated types). */
interface TestService {
  emptyCall(req: object, opts?: object): Promise<object>;
  unaryCall(req: object, opts?: object): Promise<Responses>;
  streamingOutputCall(req: object, opts?: object): AsyncIterable<Responses>;
  streamingInputCall(
    req: AsyncIterable<object>,
    opts?: object,
  ): Promise<{ aggregatedPayloadSize: number }>;
  fullDuplexCall(req: AsyncIterable<object>, opts?: object): AsyncIterable<Responses>;
  unimplementedCall(req: object, opts?: object): Promise<object>;
}

let server: Running<InteropMethod>;
let client: TestService;
const dir = mkdtempSync(path.join(os.tmpdir(), 'native-interop-connect-'));

beforeAll(async () => {
  const setFile = path.join(dir, 'interop.binpb');
  execFileSync(
    await bufBinary(),
    ['build', '.', '--path', 'src/proto/grpc/testing/test.proto', '-o', setFile],
    { cwd: TESTDATA, stdio: 'pipe' },
  );
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(setFile)));
  const service = registry.getService('grpc.testing.TestService') as DescService;
  server = await startNative(interopMethods(), dispatchInterop, {});
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` });
  client = createClient(service, transport) as Client<DescService> as unknown as TestService;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function* messages(...items: object[]): AsyncIterable<object> {
  for (const m of items) yield m;
}

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('the call succeeded');
}

const zeros = (n: number) => new Uint8Array(n);

describe('gRPC interop cases against the node:http2 server (connect-node gRPC transport)', () => {
  it('empty_unary', async () => {
    expect(await client.emptyCall({})).toBeDefined();
  });

  it('large_unary', async () => {
    const r = await client.unaryCall({ responseSize: 314159, payload: { body: zeros(271828) } });
    expect(r.payload?.body.length).toBe(314159);
  });

  it('client_streaming', async () => {
    const r = await client.streamingInputCall(
      messages(...[27182, 8, 1828, 45904].map((n) => ({ payload: { body: zeros(n) } }))),
    );
    expect(r.aggregatedPayloadSize).toBe(74922);
  });

  it('server_streaming', async () => {
    const sizes: number[] = [];
    for await (const m of client.streamingOutputCall({
      responseParameters: [31415, 9, 2653, 58979].map((size) => ({ size })),
    }))
      sizes.push(m.payload?.body.length ?? -1);
    expect(sizes).toEqual([31415, 9, 2653, 58979]);
  });

  it('ping_pong', async () => {
    const pairs = [
      [31415, 27182],
      [9, 8],
      [2653, 1828],
      [58979, 45904],
    ] as const;
    // Each request is sent once the previous answer has come.
    let answered: () => void = () => undefined;
    async function* requests(): AsyncIterable<object> {
      for (const [size, body] of pairs) {
        const next = new Promise<void>((resolve) => (answered = resolve));
        yield { responseParameters: [{ size }], payload: { body: zeros(body) } };
        await next;
      }
    }
    const sizes: number[] = [];
    for await (const m of client.fullDuplexCall(requests())) {
      sizes.push(m.payload?.body.length ?? -1);
      answered();
    }
    expect(sizes).toEqual([31415, 9, 2653, 58979]);
  });

  it('empty_stream', async () => {
    const got: Responses[] = [];
    for await (const m of client.fullDuplexCall(messages())) got.push(m);
    expect(got).toEqual([]);
  });

  it('status_code_and_message and special_status_message', async () => {
    for (const message of [
      'test status message',
      '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n',
    ]) {
      const unary = await failure(client.unaryCall({ responseStatus: { code: 2, message } }));
      expect(unary.code).toBe(Code.Unknown);
      expect(unary.rawMessage).toBe(message);
    }
    const stream = await failure(
      (async () => {
        for await (const _ of client.fullDuplexCall(
          messages({ responseStatus: { code: 2, message: 'test status message' } }),
        ));
      })(),
    );
    expect(stream.code).toBe(Code.Unknown);
    expect(stream.rawMessage).toBe('test status message');
  });

  it('custom_metadata', async () => {
    const headers = {
      'x-grpc-test-echo-initial': 'test_initial_metadata_value',
      'x-grpc-test-echo-trailing-bin': encodeBinaryHeader(new Uint8Array([0xab, 0xab, 0xab])),
    };
    let initial: Headers | undefined;
    let trailing: Headers | undefined;
    await client.unaryCall(
      { responseSize: 314159, payload: { body: zeros(271828) } },
      {
        headers,
        onHeader: (h: Headers) => (initial = h),
        onTrailer: (t: Headers) => (trailing = t),
      },
    );
    expect(initial?.get('x-grpc-test-echo-initial')).toBe('test_initial_metadata_value');
    expect(decodeBinaryHeader(trailing?.get('x-grpc-test-echo-trailing-bin') ?? '')).toEqual(
      new Uint8Array([0xab, 0xab, 0xab]),
    );
  });

  it('unimplemented_method', async () => {
    expect((await failure(client.unimplementedCall({}))).code).toBe(Code.Unimplemented);
  });

  it('timeout_on_sleeping_server', async () => {
    async function* sleepy(): AsyncIterable<object> {
      yield { payload: { body: zeros(27182) } };
      // The client keeps its side open: the server sleeps on it.
      await new Promise(() => undefined);
    }
    const err = await failure(
      (async () => {
        for await (const _ of client.fullDuplexCall(sleepy(), { timeoutMs: 1 }));
      })(),
    );
    expect(err.code).toBe(Code.DeadlineExceeded);
  });
});
