import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StringValueSchema } from '@bufbuild/protobuf/wkt';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  makeGenericClientConstructor,
  Metadata,
  type Client,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import {
  Code,
  RpcError,
  detail,
  grpcEntry,
  typedClient,
  type TypedClient,
} from '@svcboot/entry-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient } from './index.js';
import {
  CallReplySchema,
  CallRequestSchema,
  Echo,
  type CallReply,
  type CallRequest,
} from './test-support/gen/echo/v1/echo_pb.js';
import { until } from './test-support/processes.js';

/** What the backend's failure says: nothing of it may reach the front's caller by default. */
const SECRET = 'db 10.9.8.7:5432 refused user admin';

/** Echo's method as a grpc-js definition, for the plain handler and client. */
const echoDefinition: ServiceDefinition = {
  call: {
    path: '/echo.v1.Echo/Call',
    requestStream: false,
    responseStream: false,
    requestSerialize: (m: CallRequest) => Buffer.from(toBinary(CallRequestSchema, m)),
    requestDeserialize: (b: Buffer) => fromBinary(CallRequestSchema, b),
    responseSerialize: (m: CallReply) => Buffer.from(toBinary(CallReplySchema, m)),
    responseDeserialize: (b: Buffer) => fromBinary(CallReplySchema, b),
  },
};

describe("a backend's error, rethrown by the front's handler", () => {
  let dir: string;
  let backend: App;
  let front: App;
  let caller: TypedClient<typeof Echo>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'grpcclient-errors-'));
    backend = await boot({
      configText: `app: { name: backend }
logger: [{ name: quiet, level: error }]
grpc: [{ name: echo, port: 0, loggerEntry: quiet }]
`,
      argv: [],
      env: {},
    });
    grpcEntry(backend, 'echo').addService(Echo, {
      async call() {
        const trailers = new Metadata();
        trailers.set('x-internal-host', 'db-7.internal');
        throw new RpcError(
          Code.FAILED_PRECONDITION,
          SECRET,
          [detail(StringValueSchema, { value: `stack: ${SECRET}` })],
          trailers,
        );
      },
    });
    await backend.bootstrap();
    const target = `static:///127.0.0.1:${grpcEntry(backend, 'echo').port}`;
    front = await boot({
      configText: `app: { name: front }
logger: [{ name: quiet, level: error }]
event: [{ name: records, encoding: json, outputPaths: [${JSON.stringify(path.join(dir, 'front.jsonl'))}] }]
grpcclient:
  - { name: hidden, target: "${target}", timeoutMs: 5000 }
  - { name: open, target: "${target}", timeoutMs: 5000, errors: { passThrough: true } }
grpc:
  - name: front
    port: 0
    loggerEntry: quiet
    eventEntry: records
    middleware: { meta: { enabled: true }, logging: { enabled: true } }
`,
      argv: [],
      env: {},
    });
    // The handler lets the client's RpcError propagate; the request's text picks the client.
    grpcEntry(front, 'front').addService(Echo, {
      call: (request, ctx) => grpcClient(front, request.text).client(Echo, ctx).call(request),
    });
    await front.bootstrap();
    caller = typedClient(Echo, `127.0.0.1:${grpcEntry(front, 'front').port}`);
  });
  afterAll(async () => {
    caller?.$close();
    await front?.shutdown('test');
    await backend?.shutdown('test');
    await rm(dir, { recursive: true, force: true });
  });

  const failureOf = async (text: string, requestId: string): Promise<RpcError> => {
    const metadata = new Metadata();
    metadata.set('x-request-id', requestId);
    const err = await caller.call({ text }, { metadata }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RpcError);
    return err as RpcError;
  };

  it('by default, reaches the caller as its code and a generic message; the record keeps the text', async () => {
    const err = await failureOf('hidden', 'req-hidden-1');
    expect(err.code).toBe(Code.FAILED_PRECONDITION);
    expect(err.message).toBe('upstream "hidden" failed: FAILED_PRECONDITION');
    expect(err.details).toEqual([]);
    expect(err.metadata.get('x-internal-host')).toEqual([]);
    expect(JSON.stringify(err.metadata.toJSON())).not.toContain('10.9.8.7');

    let record: { error?: unknown; resCode?: string } | undefined;
    await until(
      async () => {
        const text = await readFile(path.join(dir, 'front.jsonl'), 'utf-8').catch(() => '');
        record = text
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find(
            (r) =>
              (r.ids as { requestId?: string }).requestId === 'req-hidden-1' &&
              (r.app as { entryType?: string }).entryType === 'GrpcEntry',
          );
        return record !== undefined;
      },
      10_000,
      "the front's record of the call",
    );
    expect(record?.resCode).toBe('FailedPrecondition');
    expect(JSON.stringify(record?.error)).toContain(SECRET);
  });

  it('with errors.passThrough, reaches the caller with the backend message, details and trailers', async () => {
    const err = await failureOf('open', 'req-open-1');
    expect(err.code).toBe(Code.FAILED_PRECONDITION);
    expect(err.message).toBe(SECRET);
    expect(err.findDetail(StringValueSchema)?.value).toBe(`stack: ${SECRET}`);
    expect(err.metadata.get('x-internal-host')).toEqual(['db-7.internal']);
  });

  it('a plain grpc-js handler that passes a plain client ServiceError to its callback: generic too', async () => {
    const app = await boot({
      configText: `app: { name: plain-front }
logger: [{ name: quiet, level: error }]
grpcclient:
  - { name: hidden, target: "static:///127.0.0.1:${grpcEntry(backend, 'echo').port}", timeoutMs: 5000 }
grpc: [{ name: front, port: 0, loggerEntry: quiet }]
`,
      argv: [],
      env: {},
    });
    try {
      const EchoClient = makeGenericClientConstructor(echoDefinition, 'Echo');
      type PlainEcho = Client & {
        call(
          request: CallRequest,
          done: (err: ServiceError | null, reply?: CallReply) => void,
        ): void;
      };
      let seen: ServiceError | undefined;
      grpcEntry(app, 'front').addService(echoDefinition, {
        call: (
          call: ServerUnaryCall<CallRequest, CallReply>,
          callback: sendUnaryData<CallReply>,
        ) => {
          const client = grpcClient(app, 'hidden').plain(EchoClient) as unknown as PlainEcho;
          client.call(call.request, (err, reply) => {
            seen = err ?? undefined;
            callback(err, reply);
          });
        },
      });
      await app.bootstrap();
      const viaFront = typedClient(Echo, `127.0.0.1:${grpcEntry(app, 'front').port}`);
      const err = (await viaFront.call({ text: 'x' }).catch((e: unknown) => e)) as RpcError;
      viaFront.$close();
      // The handler saw the backend's text; the front's caller does not.
      expect(seen?.details).toBe(SECRET);
      expect(err.code).toBe(Code.FAILED_PRECONDITION);
      expect(err.message).toBe('upstream "hidden" failed: FAILED_PRECONDITION');
      expect(err.metadata.get('x-internal-host')).toEqual([]);
    } finally {
      await app.shutdown('test');
    }
  });
});
