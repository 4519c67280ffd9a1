import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { makeGenericClientConstructor } from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { Code, RpcError, grpcEntry, typedClient, type TypedClient } from '@svcboot/entry-grpc';
import '@svcboot/middleware-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClient } from './index.js';
import { echoService } from './test-support/echo.js';
import {
  CallReplySchema,
  CallRequestSchema,
  Echo,
  type CallReply,
  type CallRequest,
} from './test-support/gen/echo/v1/echo_pb.js';
import { closedPort, startReplica, until, type Replica } from './test-support/processes.js';

async function bootApp(configText: string, dir: string, setup?: (app: App) => void): Promise<App> {
  const app = await boot({
    configText,
    cwd: dir,
    argv: [],
    env: { ...process.env, OUTBOUND_TOKEN: 's3cret-outbound' },
  });
  setup?.(app);
  try {
    await app.bootstrap();
  } catch (err) {
    await app.shutdown('test').catch(() => undefined);
    throw err;
  }
  return app;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'grpcclient-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('grpcclient config', () => {
  it('a malformed target is a config error naming the path', async () => {
    const configText = `app: { name: caller }
grpcclient:
  - name: users
    target: static:///users.internal:8080
`;
    await expect(boot({ configText, cwd: dir, argv: [], env: {} })).rejects.toThrow(
      /grpcclient\[users\]\.target.*"users.internal" is not an IP address/,
    );
    await expect(
      boot({
        configText: configText.replace('static:///users.internal:8080', 'dns:///users:99999'),
        cwd: dir,
        argv: [],
        env: {},
      }),
    ).rejects.toThrow(/outside 1-65535/);
  });
});

describe('an outbound call made inside an inbound call', () => {
  let backend: App;
  let front: App;
  let caller: TypedClient<typeof Echo>;

  beforeAll(async () => {
    backend = await bootApp(
      `app: { name: backend }
logger: [{ name: quiet, level: error }]
event: [{ name: records, encoding: json, outputPaths: [${JSON.stringify(path.join(dir, 'backend.jsonl'))}] }]
grpc:
  - name: echo
    port: 0
    loggerEntry: quiet
    eventEntry: records
    middleware: { meta: { enabled: true }, logging: { enabled: true } }
`,
      dir,
      (app) => grpcEntry(app, 'echo').addService(Echo, echoService('backend')),
    );
    const port = grpcEntry(backend, 'echo').port;
    front = await bootApp(
      `app: { name: front }
logger: [{ name: quiet, level: error }]
event: [{ name: records, encoding: json, outputPaths: [${JSON.stringify(path.join(dir, 'front.jsonl'))}] }]
grpcclient:
  - name: backend
    eventEntry: records
    target: dns:///127.0.0.1:${port}
    timeoutMs: 60000
    deadlineMarginMs: 25
    auth: { bearerToken: "\${OUTBOUND_TOKEN}" }
    propagate: { metadata: [x-tenant] }
    middleware: { logging: { enabled: true } }
grpc:
  - name: front
    port: 0
    loggerEntry: quiet
    eventEntry: records
    middleware:
      meta: { enabled: true }
      logging: { enabled: true }
      trace: { enabled: true, exporter: { file: { enabled: true, outputPath: ${JSON.stringify(path.join(dir, 'spans.jsonl'))} } } }
`,
      dir,
      (app) =>
        grpcEntry(app, 'front').addService(Echo, {
          // The front answers with what the backend saw of the call it made on this one's behalf.
          call: (request, ctx) => grpcClient(app, 'backend').client(Echo, ctx).call(request),
        }),
    );
    caller = typedClient(Echo, `127.0.0.1:${grpcEntry(front, 'front').port}`);
  });
  afterAll(async () => {
    caller?.$close();
    await front?.shutdown('test');
    await backend?.shutdown('test');
  });

  it('carries the deadline (less the margin), the request id, the trace and the listed metadata', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const deadline = new Date(Date.now() + 20_000);
    const reply = await caller.call(
      { text: 'hi' },
      {
        deadline,
        metadata: {
          'x-request-id': 'req-outbound-1',
          'x-tenant': 'acme',
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        },
      },
    );
    expect(reply.replica).toBe('backend');
    expect(reply.requestId).toBe('req-outbound-1');
    expect(reply.tenant).toBe('acme');
    // The backend's deadline is the caller's (each hop re-bases grpc-timeout on its own clock, so
    // it is the caller's give or take the time in transit, less the margin), not the client's 60 s.
    expect(Math.abs(Number(reply.deadlineMs) - deadline.getTime())).toBeLessThan(10_000);
    expect(reply.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(reply.traceparent).not.toContain('00f067aa0ba902b7');
    // Each service's record of the call carries the same request id and trace id.
    const recordOf = async (
      file: string,
      entryType: string,
    ): Promise<Record<string, unknown> | undefined> => {
      const text = await readFile(path.join(dir, file), 'utf-8').catch(() => '');
      return text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find(
          (r) =>
            (r.ids as { requestId?: string } | undefined)?.requestId === 'req-outbound-1' &&
            (r.app as { entryType?: string } | undefined)?.entryType === entryType,
        );
    };
    let front: Record<string, unknown> | undefined;
    let outbound: Record<string, unknown> | undefined;
    let back: Record<string, unknown> | undefined;
    await until(
      async () => {
        front = await recordOf('front.jsonl', 'GrpcEntry');
        outbound = await recordOf('front.jsonl', 'GrpcClientEntry');
        back = await recordOf('backend.jsonl', 'GrpcEntry');
        return front !== undefined && outbound !== undefined && back !== undefined;
      },
      10_000,
      'a record of the call in both services, and of the outbound call',
    );
    expect(front?.ids).toMatchObject({ traceId });
    expect(back?.operation).toBe(front?.operation);
    // The outbound call's own record: the client entry's type and name, the target as the remote
    // address, the gRPC result, and the client span's ids.
    expect(outbound).toMatchObject({
      app: { appName: 'front', entryName: 'backend', entryType: 'GrpcClientEntry' },
      payloads: { grpcService: 'echo.v1.Echo', grpcMethod: 'Call', grpcType: 'UnaryClient' },
      operation: '/echo.v1.Echo/Call',
      resCode: 'OK',
      remoteAddr: `dns:///127.0.0.1:${grpcEntry(backend, 'echo').port}`,
      ids: { traceId, spanId: reply.traceparent.split('-')[2] },
    });
    // The outbound call has a client span: child of the front's server span, parent of the
    // backend's side (its id is the traceparent the backend got).
    const clientSpanId = reply.traceparent.split('-')[2];
    type SpanLine = {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      name: string;
      kind: number;
    };
    let spans: SpanLine[] = [];
    await until(
      async () => {
        const text = await readFile(path.join(dir, 'spans.jsonl'), 'utf-8').catch(() => '');
        spans = text
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as SpanLine);
        return spans.some((x) => x.spanId === clientSpanId);
      },
      10_000,
      'the client span in the exported spans',
    );
    const clientSpan = spans.find((x) => x.spanId === clientSpanId);
    expect(clientSpan).toMatchObject({ traceId, name: 'echo.v1.Echo/Call', kind: 'client' });
    const serverSpan = spans.find((x) => x.spanId === clientSpan?.parentSpanId);
    expect(serverSpan).toMatchObject({ traceId, parentSpanId: '00f067aa0ba902b7' });
  });

  it("a plain grpc-js client on the entry's channel gets timeoutMs as its deadline outside an inbound call", async () => {
    const EchoClient = makeGenericClientConstructor(
      {
        call: {
          path: '/echo.v1.Echo/Call',
          requestStream: false,
          responseStream: false,
          requestSerialize: (v: CallRequest) => Buffer.from(toBinary(CallRequestSchema, v)),
          requestDeserialize: (b: Buffer) => fromBinary(CallRequestSchema, b),
          responseSerialize: (v: CallReply) => Buffer.from(toBinary(CallReplySchema, v)),
          responseDeserialize: (b: Buffer) => fromBinary(CallReplySchema, b),
        },
      },
      'Echo',
    );
    type PlainEcho = {
      call(r: CallRequest, cb: (err: Error | null, reply?: CallReply) => void): void;
      close(): void;
    };
    // A client closed after its call (as grpc-js code often does) leaves the entry's channel open.
    const first = grpcClient(front, 'backend').plain(EchoClient) as unknown as PlainEcho;
    await new Promise<void>((resolve, reject) =>
      first.call(create(CallRequestSchema, { text: 'first' }), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    first.close();
    const plain = grpcClient(front, 'backend').plain(EchoClient) as unknown as PlainEcho;
    const before = Date.now();
    const reply = await new Promise<CallReply>((resolve, reject) =>
      plain.call(create(CallRequestSchema, { text: 'plain' }), (err, r) =>
        err || !r ? reject(err) : resolve(r),
      ),
    );
    expect(reply.text).toBe('plain');
    // No inbound call: the client's timeoutMs (60 s) is the deadline; a fresh request id.
    expect(Number(reply.deadlineMs)).toBeGreaterThanOrEqual(before + 50_000);
    expect(Number(reply.deadlineMs)).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(reply.requestId).not.toBe('');
    // The client's credentials, from ${OUTBOUND_TOKEN}.
    expect(reply.authorization).toBe('Bearer s3cret-outbound');
  });
});

describe('backends that fail', () => {
  let app: App | undefined;
  const replicas: Replica[] = [];
  afterAll(async () => {
    await app?.shutdown('test');
    for (const r of replicas) await r.kill();
  });

  it('an unreachable backend answers UNAVAILABLE, not a hang, with the target in the record', async () => {
    const port = await closedPort();
    const records = path.join(dir, 'lonely.jsonl');
    const a = await bootApp(
      `app: { name: lonely }
event: [{ name: records, encoding: json, outputPaths: [${JSON.stringify(records)}] }]
grpcclient:
  - name: nobody
    target: static:///127.0.0.1:${port}
    timeoutMs: 10000
    eventEntry: records
    middleware: { logging: { enabled: true } }
`,
      dir,
    );
    try {
      const err = await grpcClient(a, 'nobody')
        .client(Echo)
        .call({ text: 'x' }, { metadata: { 'x-request-id': 'req-nobody' } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).code).toBe(Code.UNAVAILABLE);
      let record: Record<string, unknown> | undefined;
      await until(
        async () => {
          const text = await readFile(records, 'utf-8').catch(() => '');
          record = text
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((r) => (r.ids as { requestId?: string }).requestId === 'req-nobody');
          return record !== undefined;
        },
        10_000,
        'the record of the failed call',
      );
      expect(record).toMatchObject({
        app: { entryName: 'nobody', entryType: 'GrpcClientEntry' },
        remoteAddr: `static:///127.0.0.1:${port}`,
        resCode: 'Unavailable',
      });
    } finally {
      await a.shutdown('test');
    }
  });

  it('an eager client whose backend is down fails bootstrap naming the entry and the target', async () => {
    const port = await closedPort();
    const err = await bootApp(
      `app: { name: eager }
grpcclient:
  - name: users
    target: static:///127.0.0.1:${port}
    eager: true
    connectTimeoutMs: 300
`,
      dir,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      new RegExp(
        `grpcclient\\[users\\]: cannot connect to static:///127.0.0.1:${port} at bootstrap`,
      ),
    );
  });

  it('readinessCheck: /readyz names the client while its backend is down, and is ready once it is back', async () => {
    const port = await closedPort();
    const a = await bootApp(
      `app: { name: ready }
logger: [{ name: quiet, level: error }]
grpcclient:
  - name: users
    target: static:///127.0.0.1:${port}
    readinessCheck: true
    loggerEntry: quiet
    reconnectBackoffMs: { initial: 100, max: 200 }
grpc:
  - name: front
    port: 0
    loggerEntry: quiet
`,
      dir,
    );
    let back: App | undefined;
    try {
      const readyz = `http://127.0.0.1:${grpcEntry(a, 'front').port}/readyz`;
      // Lazy: nothing tried yet, nothing down.
      expect((await fetch(readyz)).status).toBe(200);
      const users = grpcClient(a, 'users').client(Echo);
      await expect(users.call({ text: 'x' })).rejects.toMatchObject({ code: Code.UNAVAILABLE });
      let body: unknown;
      await until(
        async () => {
          const r = await fetch(readyz);
          body = await r.json();
          return r.status === 503;
        },
        10_000,
        '/readyz to say not ready',
      );
      expect(body).toMatchObject({
        status: 'not ready',
        down: [{ entry: 'users', kind: 'grpcclient' }],
      });
      back = await bootApp(
        `app: { name: users }
logger: [{ name: quiet, level: error }]
grpc:
  - name: echo
    port: ${port}
    loggerEntry: quiet
`,
        dir,
        (app) => grpcEntry(app, 'echo').addService(Echo, echoService('users')),
      );
      await until(
        async () => (await users.call({ text: 'y' }).catch(() => undefined))?.replica === 'users',
        10_000,
        'a call to succeed',
      );
      await until(async () => (await fetch(readyz)).status === 200, 10_000, '/readyz to say ready');
    } finally {
      await back?.shutdown('test');
      await a.shutdown('test');
    }
  });

  it('round_robin with retries: killing one of two replicas under load fails no call; all down opens the breaker, one back closes it', async () => {
    replicas.push(await startReplica('r1'), await startReplica('r2'));
    const [r1, r2] = replicas as [Replica, Replica];
    app = await bootApp(
      `app: { name: caller }
logger: [{ name: quiet, level: error }]
grpcclient:
  - name: echo
    target: static:///127.0.0.1:${r1.port},127.0.0.1:${r2.port}
    loadBalancing: round_robin
    timeoutMs: 5000
    eager: true
    retry: { maxAttempts: 5, initialBackoffMs: 20, maxBackoffMs: 200, retryableCodes: [UNAVAILABLE], budget: { maxTokens: 100 } }
    breaker: { enabled: true, minRequests: 5, windowMs: 1000, buckets: 10 }
    reconnectBackoffMs: { initial: 100, max: 200 }
    metricsEntry: ops
    middleware: { prom: { enabled: true } }
grpc:
  - name: ops
    port: 0
    loggerEntry: quiet
    prom: { enabled: true }
    middleware: { prom: { enabled: true } }
`,
      dir,
    );
    const entry = grpcClient(app, 'echo');
    const client = entry.client(Echo);

    // Steady load: 4 callers in a loop until told to stop.
    const seen = new Set<string>();
    let ok = 0;
    const failures: unknown[] = [];
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        try {
          seen.add((await client.call({ text: 'load' })).replica);
          ok++;
        } catch (err) {
          failures.push(err);
        }
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker()]);
    await until(() => seen.has('r1') && seen.has('r2'), 20_000, 'both replicas to answer');
    await r2.kill();
    const after = ok;
    await until(() => ok >= after + 200, 30_000, '200 calls after the kill');
    stop = true;
    await load;
    expect(failures).toEqual([]);

    // Every replica down: calls fail, then the breaker refuses them without sending.
    await r1.kill();
    let refused: RpcError | undefined;
    await until(
      async () => {
        const err = await client.call({ text: 'down' }).catch((e: unknown) => e);
        if (err instanceof RpcError && /circuit breaker open/.test(err.message)) refused = err;
        return refused !== undefined;
      },
      20_000,
      'the breaker to open',
    );
    expect(refused?.code).toBe(Code.UNAVAILABLE);
    expect(entry.breakerState).toBe('open');
    // The ops entry's /metrics serves the client families (metricsEntry).
    const metricsUrl = `http://127.0.0.1:${grpcEntry(app, 'ops').port}/metrics`;
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/grpc_client_breaker_rejected_total\{client="echo"\} [1-9]/);
    // The client chain's prom middleware: go-grpc-prometheus's client families, and svc_call_*
    // rows of the client entry beside the server's own (one family, told apart by entry_type).
    expect(metrics).toMatch(
      /grpc_client_handled_total\{client="echo",grpc_type="unary",grpc_service="echo.v1.Echo",grpc_method="Call",grpc_code="Unavailable"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /grpc_client_started_total\{client="echo",grpc_type="unary",grpc_service="echo.v1.Echo",grpc_method="Call"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /svc_call_res_code_total\{entry_name="echo",entry_type="GrpcClientEntry",[^}]*grpc_method="Call",[^}]*res_code="Unavailable"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /svc_call_rejections_total\{entry_name="echo",middleware="breaker",reason="open"\} [1-9]/,
    );

    // One replica back on its port: calls succeed again and the breaker closes.
    replicas.push(await startReplica('r1-again', r1.port));
    await until(
      async () => {
        const reply = await client.call({ text: 'back' }).catch(() => undefined);
        return reply?.replica === 'r1-again' && entry.breakerState === 'closed';
      },
      20_000,
      'the breaker to close',
    );
    expect(await (await fetch(metricsUrl)).text()).toMatch(
      /grpc_client_breaker_state\{client="echo"\} 0/,
    );
  });
});
