/** Test helpers for the native server: a listening server, grpc-js clients, raw HTTP/2 calls. */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { NativeMethodShape } from '../call.js';
import { type NativeDispatch, NativeGrpcServer, type NativeServerOptions } from '../server.js';
import { TESTDATA } from './interop-service.js';

export interface Running<M extends NativeMethodShape> {
  readonly port: number;
  readonly native: NativeGrpcServer<M>;
  readonly h2: http2.Http2Server;
  close(): Promise<void>;
}

/** A NativeGrpcServer on its own h2c server on 127.0.0.1, on a free port. */
export async function startNative<M extends NativeMethodShape>(
  methods: ReadonlyMap<string, M>,
  dispatch: NativeDispatch<M>,
  options: NativeServerOptions = {},
): Promise<Running<M>> {
  const native = new NativeGrpcServer<M>((p) => methods.get(p), dispatch, options);
  const h2 = native.createServer();
  await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
  const { port } = h2.address() as AddressInfo;
  return {
    port,
    native,
    h2,
    close: async () => {
      const closed = new Promise<void>((resolve) => h2.close(() => resolve()));
      await native.shutdown(0);
      await closed;
    },
  };
}

type ClientCtor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => grpc.Client;

let interopPackage: grpc.GrpcObject | undefined;

/** The grpc.testing package for grpc-js clients (proto-loader, the vendored protos). */
export function interopClients(): { TestService: ClientCtor; UnimplementedService: ClientCtor } {
  if (!interopPackage) {
    const def = protoLoader.loadSync(path.join('src/proto/grpc/testing/test.proto'), {
      includeDirs: [TESTDATA],
      keepCase: false,
      longs: Number,
      defaults: false,
    });
    interopPackage = grpc.loadPackageDefinition(def);
  }
  const testing = (interopPackage['grpc'] as grpc.GrpcObject)['testing'] as grpc.GrpcObject;
  return {
    TestService: testing['TestService'] as unknown as ClientCtor,
    UnimplementedService: testing['UnimplementedService'] as unknown as ClientCtor,
  };
}

/** One gRPC frame read off a raw response. */
export interface RawFrame {
  readonly compressed: boolean;
  readonly data: Buffer;
}

export interface RawResult {
  readonly headers: http2.IncomingHttpHeaders;
  readonly trailers: http2.IncomingHttpHeaders;
  readonly frames: RawFrame[];
  readonly rstCode: number;
}

/** Splits a gRPC response body into frames (without inflating them). */
export function splitFrames(body: Buffer): RawFrame[] {
  const frames: RawFrame[] = [];
  let pos = 0;
  while (pos + 5 <= body.length) {
    const length = body.readUInt32BE(pos + 1);
    frames.push({ compressed: body[pos] === 1, data: body.subarray(pos + 5, pos + 5 + length) });
    pos += 5 + length;
  }
  return frames;
}

/** A gRPC frame of `message`, flagged compressed or not (the bytes are taken as given). */
export function frame(message: Uint8Array, compressed = false): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** A call made with node:http2 directly, for what a grpc-js client cannot produce or show. */
export async function rawCall(
  port: number,
  pathName: string,
  body: Buffer | Buffer[],
  headers: http2.OutgoingHttpHeaders = {},
): Promise<RawResult> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  try {
    const req = session.request({
      ':method': 'POST',
      ':path': pathName,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    req.on('error', () => undefined);
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => (responseHeaders = h));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    for (const b of Array.isArray(body) ? body : [body]) req.write(b);
    req.end();
    await new Promise<void>((resolve) => req.once('close', () => resolve()));
    return {
      headers: responseHeaders,
      trailers,
      frames: splitFrames(Buffer.concat(chunks)),
      rstCode: req.rstCode ?? 0,
    };
  } finally {
    session.close();
  }
}

/** The status of a trailers-only response or of the trailers. */
export function statusOf(r: RawResult): { code: string | undefined; message: string | undefined } {
  const src = r.trailers['grpc-status'] !== undefined ? r.trailers : r.headers;
  const code = src['grpc-status'];
  const message = src['grpc-message'];
  return {
    code: typeof code === 'string' ? code : undefined,
    message: typeof message === 'string' ? message : undefined,
  };
}

/** A promise of a grpc-js unary call's outcome. */
export function unary<Res>(
  client: grpc.Client,
  method: string,
  request: unknown,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<{
  error: grpc.ServiceError | null;
  response: Res | undefined;
  headers: grpc.Metadata | undefined;
  trailers: grpc.Metadata | undefined;
}> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    let trailers: grpc.Metadata | undefined;
    let outcome: { error: grpc.ServiceError | null; response: Res | undefined } | undefined;
    let statusSeen = false;
    const finish = () => {
      if (outcome && statusSeen) resolve({ ...outcome, headers, trailers });
    };
    const fn = (client as unknown as Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>)[
      method
    ]!;
    const call = fn.call(
      client,
      request,
      metadata,
      options,
      (error: grpc.ServiceError | null, response: Res) => {
        outcome = { error, response };
        finish();
      },
    );
    call.on('metadata', (md: grpc.Metadata) => (headers = md));
    call.on('status', (s: grpc.StatusObject) => {
      trailers = s.metadata;
      statusSeen = true;
      finish();
    });
  });
}

/** A test method: its shape and what it does with a call. */
export interface TestMethod extends NativeMethodShape {
  readonly run: (call: import('../call.js').NativeCall<TestMethod>) => void | Promise<void>;
}

/** Runs a TestMethod; a failure ends the call with INTERNAL and the error's message. */
export function dispatchTest(call: import('../call.js').NativeCall<TestMethod>): void {
  Promise.resolve()
    .then(() => call.method.run(call))
    .catch((err: unknown) =>
      call.end({
        code: grpc.status.INTERNAL,
        message: err instanceof Error ? err.message : String(err),
      }),
    );
}

const identity = (b: Buffer) => b;

/** A grpc-js unary call of raw bytes. */
export function rawUnary(
  client: grpc.Client,
  pathName: string,
  body: Buffer,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<{
  error: grpc.ServiceError | null;
  response: Buffer | undefined;
  headers?: grpc.Metadata;
  status?: grpc.StatusObject;
}> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    let status: grpc.StatusObject | undefined;
    let outcome: { error: grpc.ServiceError | null; response: Buffer | undefined } | undefined;
    const finish = () => {
      if (outcome && status) resolve({ ...outcome, headers, status });
    };
    const call = client.makeUnaryRequest(
      pathName,
      identity,
      identity,
      body,
      metadata,
      options,
      (error, response) => {
        outcome = { error: error ?? null, response };
        finish();
      },
    );
    call.on('metadata', (md) => (headers = md));
    call.on('status', (s) => {
      status = s;
      finish();
    });
  });
}
