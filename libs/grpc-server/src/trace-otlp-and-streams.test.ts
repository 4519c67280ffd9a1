// Makes middleware.trace configurable, as an app's import of the package does.
import '@svcboot/middleware-trace';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { credentials, loadPackageDefinition, Metadata } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, CallRejection, entryGetter, type App } from '@svcboot/entry-core';
import { loggerPlugin } from '@svcboot/entry-core/toolkit';
import { kvEntry } from '@svcboot/entry-kv';
import { relationalDbEntry } from '@svcboot/entry-sql';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { callContextOf, grpcEntry } from './index.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './test-support/library-service.js';
import { unary, type Harness } from './test-support/harness.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from './test-support/otlp-receiver.js';

/**
 * Tracing where a grpc entry has its own concerns: the OTLP/HTTP exporter to a receiver, the
 * Redis and PostgreSQL client spans as children of the server span, gateway route templates, and
 * x-trace-id and the active span on gRPC streams, client-streamed messages and NDJSON streams.
 * What tracing does on every transport (parents, b3, sampling, records, refusals, errors) is
 * checked by tools/conformance.
 */

// An incoming W3C trace: the server span must be its child.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

interface Running {
  app: App;
  base: string;
  client: Harness['client'];
  dir: string;
  events: string;
  logs: string;
}

let running: Running | undefined;
/** For each client-streamed message: was the call's span the active one when it arrived? */
const inScope: boolean[] = [];
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  if (running) {
    running.client.close();
    await running.app.shutdown('test').catch(() => undefined);
    await rm(running.dir, { recursive: true, force: true });
  }
  await receiver?.close();
  running = undefined;
  receiver = undefined;
});

/**
 * A grpc entry serving the test Library with tracing to an OTLP receiver, a Redis kvstore and
 * the PostgreSQL `postgres` database; GetShelf uses both, and logs a line.
 */
async function start(otlpUrl: string, traceYaml = ''): Promise<Running> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-trace-'));
  const events = path.join(dir, 'events.log');
  const logs = path.join(dir, 'app.log');
  // Client streaming over the gateway needs an HTTP rule (unbound methods are unary or server streaming).
  const mapping = path.join(dir, 'gw_mapping.yaml');
  await writeFile(
    mapping,
    'type: google.api.Service\nconfig_version: 3\nhttp:\n  rules:\n    - selector: test.v1.Library.Collect\n      post: /v1/collect\n      body: "*"\n',
  );
  const app = await boot({
    argv: [],
    env: { ...process.env, DOMAIN: 'test' },
    cwd: dir,
    configText: `app: { name: library, version: 1.2.3 }
logger:
  - name: applog
    level: info
    encoding: json
    outputPaths: ["${logs}"]
event:
  - name: records
    encoding: json
    outputPaths: ["${events}"]
kvstore:
  - name: redis
    addrs: ["127.0.0.1:6379"]
relationaldb:
  - name: pg
    enabled: true
    addr: 127.0.0.1:5432
    user: postgres
    database: [{ name: postgres }]
grpc:
  - name: lib
    port: 0
    loggerEntry: applog
    eventEntry: records
    enableSvcGwOption: true
    generateUnboundMethods: true
    gwMappingFiles: ["${mapping}"]
    protos:
      files: ["${libraryProto}"]
      includeDirs: ["${protoDir}"]
    middleware:
      logging: { enabled: true }
      trace:
        enabled: true
        exporter:
          otlp: { enabled: true, endpoint: "${otlpUrl}", headers: { x-api-key: secret-key } }
${traceYaml}`,
  });
  const entry = grpcEntry(app, 'lib');
  const redis = kvEntry(app, 'redis');
  const pg = relationalDbEntry(app, 'pg');
  const log = entryGetter(loggerPlugin)(app, 'applog').logger;
  entry.addService(libraryDefinition(), {
    ...libraryImplementation,
    GetShelf: (call: { request: { name: string } }, cb: (e: unknown, r?: unknown) => void) => {
      void (async () => {
        const key = `svcboot-trace-test:${call.request.name}`;
        await redis.client.set(key, 'x', 'EX', 60);
        const got = await redis.client.get(key);
        const rows = await pg
          .db<Record<string, never>>('postgres')
          .selectNoFrom((eb) => eb.val(1).as('one'))
          .execute();
        log.info({ got, rows: rows.length }, 'shelf handled');
        cb(null, { name: call.request.name, tags: ['traced'] });
      })().catch((err: unknown) => cb(err));
    },
    // A client stream: each message must arrive with the call's span active (the transports' hook).
    Collect: (
      call: NodeJS.EventEmitter & { metadata: Metadata },
      cb: (e: unknown, r?: unknown) => void,
    ) => {
      const mine = callContextOf(call)?.spanId;
      call.on('data', () => {
        inScope.push(trace.getActiveSpan()?.spanContext().spanId === mine && mine !== undefined);
      });
      call.on('end', () => cb(null, { hits: [] }));
    },
  } as typeof libraryImplementation);
  // A guard refusing calls that carry `deny`: its rejection becomes an event of the span.
  entry.useMiddleware('authn', {
    before(call) {
      if (call.headers.get('deny') !== undefined)
        throw new CallRejection(
          'PermissionDenied',
          'denied by test',
          {},
          {
            middleware: 'testGuard',
            reason: 'deny_header',
          },
        );
    },
  });
  await app.bootstrap();
  const pkg = loadPackageDefinition(
    loadSync(libraryProto, {
      includeDirs: [protoDir],
      longs: String,
      enums: String,
      defaults: true,
    }),
  ) as unknown as {
    test: {
      v1: {
        Library: new (
          a: string,
          c: ReturnType<typeof credentials.createInsecure>,
        ) => Harness['client'];
      };
    };
  };
  const client = new pkg.test.v1.Library(`127.0.0.1:${entry.port}`, credentials.createInsecure());
  return { app, base: `http://127.0.0.1:${entry.port}`, client, dir, events, logs };
}

async function records(r: Running): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(r.events, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

describe('the trace middleware on a grpc entry, exported over OTLP/HTTP protobuf', () => {
  it('a gateway call with a traceparent gives one trace: the server span its child, the Redis and PostgreSQL client spans children of it; X-Trace-Id, record and log lines carry the ids', async () => {
    receiver = await startOtlpReceiver();
    running = await start(receiver.url);
    const res = await fetch(`${running.base}/v1/shelves/s1`, {
      headers: { traceparent: TRACEPARENT, baggage: 'tenant=acme' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'shelves/s1', tags: ['traced'] });
    expect(res.headers.get('x-trace-id')).toBe(TRACE_ID);
    // Spans are batched: the shutdown flushes them to the receiver.
    await running.app.shutdown('test');

    const server = byName(receiver.spans, 'test.v1.Library/GetShelf');
    expect(server).toHaveLength(1);
    const s = server[0]!;
    expect([s.traceId, s.parentSpanId, s.kind]).toEqual([TRACE_ID, PARENT_ID, 2]);
    expect(s.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'test.v1.Library',
      'rpc.method': 'GetShelf',
      'rpc.grpc.status_code': 0,
      'http.request.method': 'GET',
      'http.route': '/v1/{name=shelves/*}',
      'url.path': '/v1/shelves/s1',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(running.base).port),
      'network.peer.address': '127.0.0.1',
    });
    expect(s.attributes['network.peer.port']).toBeGreaterThan(0);
    expect(s.resource).toMatchObject({
      'service.name': 'library',
      'service.version': '1.2.3',
      'svc.entry.name': 'lib',
    });
    const clients = receiver.spans.filter((c) => c.kind === 3);
    const redis = clients.filter(
      (c) => c.attributes['db.system.name'] === 'redis' || c.attributes['db.system'] === 'redis',
    );
    const pg = clients.filter(
      (c) =>
        c.attributes['db.system.name'] === 'postgresql' ||
        c.attributes['db.system'] === 'postgresql',
    );
    expect(redis.map((c) => c.name)).toEqual(['set', 'get']);
    expect(pg.length).toBeGreaterThanOrEqual(1);
    for (const c of [...redis, ...pg])
      expect([c.traceId, c.parentSpanId]).toEqual([TRACE_ID, s.spanId]);
    // The exporter's headers reach the collector.
    expect(receiver.requests[0]?.['x-api-key']).toBe('secret-key');

    const rec = (await records(running)).find(
      (r) => r['operation'] === '/test.v1.Library/GetShelf',
    );
    expect(rec?.['ids']).toMatchObject({ traceId: TRACE_ID, spanId: s.spanId });
    const logLine = (await readFile(running.logs, 'utf8'))
      .split('\n')
      .filter((l) => l.includes('shelf handled'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logLine).toHaveLength(1);
    expect(logLine[0]).toMatchObject({ traceId: TRACE_ID, spanId: s.spanId, got: 'x' });
  });

  it('native gRPC calls: a span per call with rpc.* attributes and the status code; x-trace-id metadata on answers, errors, rejections and streams; a rejection is an event', async () => {
    receiver = await startOtlpReceiver();
    running = await start(receiver.url);
    const md = new Metadata();
    md.set('traceparent', TRACEPARENT);
    const ok = await unary(running.client, 'Ping', { text: 'a' }, md);
    expect(ok.error).toBeUndefined();
    expect(ok.headers.get('x-trace-id')).toEqual([TRACE_ID]);

    const failed = await unary(running.client, 'Fail', { code: 13 });
    expect(failed.error?.code).toBe(13);
    const failedTrace = failed.error?.metadata.get('x-trace-id')[0];
    expect(failedTrace).toMatch(/^[0-9a-f]{32}$/);
    expect(failedTrace).not.toBe(TRACE_ID);

    const denyMd = new Metadata();
    denyMd.set('deny', 'yes');
    const denied = await unary(running.client, 'Ping', { text: 'b' }, denyMd);
    expect(denied.error?.code).toBe(7);
    expect(denied.error?.metadata.get('x-trace-id')).toHaveLength(1);

    // A method the server does not have: grpc-js answers UNIMPLEMENTED, the chain still sees it.
    const unknown = await new Promise<number>((resolve) =>
      running!.client.makeUnaryRequest(
        '/test.v1.Library/Nope',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (err) => resolve(err ? err.code : 0),
      ),
    );
    expect(unknown).toBe(12);

    const stream = running.client['ListBooks']!({ shelf: 's1', count: 2 }) as NodeJS.EventEmitter;
    const streamHeaders = await new Promise<Metadata>((resolve) =>
      stream.once('metadata', resolve),
    );
    await new Promise((resolve) =>
      stream
        .on('end', resolve)
        .on('data', () => undefined)
        .on('error', resolve),
    );
    expect(streamHeaders.get('x-trace-id')).toHaveLength(1);

    inScope.length = 0;
    let resolveCollected!: () => void;
    const collected = new Promise<void>((resolve) => (resolveCollected = resolve));
    const collect = running.client['Collect']!(() => resolveCollected()) as NodeJS.WritableStream;
    collect.write({ title: 'a' } as never);
    await new Promise((r) => setTimeout(r, 20));
    collect.write({ title: 'b' } as never);
    collect.end();
    // The call's answer (or error): the handler has seen both messages.
    await collected;
    const gwCollect = await fetch(`${running.base}/v1/collect`, {
      method: 'POST',
      body: '{"title":"c"}\n{"title":"d"}\n',
    });
    expect([gwCollect.status, await gwCollect.text()]).toEqual([200, expect.anything()]);
    expect(inScope).toEqual([true, true, true, true]);

    // Gateway: the header on a rejection's error answer and on an NDJSON stream that fails midway.
    const refused = await fetch(`${running.base}/v1/shelves/s1`, { headers: { deny: 'yes' } });
    expect(refused.status).toBe(403);
    await refused.arrayBuffer();
    expect(refused.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    const streamed = await fetch(`${running.base}/v1/shelves/s1/books?count=-1`, {
      headers: { traceparent: TRACEPARENT },
    });
    expect(await streamed.text()).toContain('negative count');
    expect(streamed.headers.get('x-trace-id')).toBe(TRACE_ID);

    await running.app.shutdown('test');
    const gwRejected = byName(receiver.spans, 'test.v1.Library/GetShelf')[0]!;
    expect(gwRejected.attributes).toMatchObject({
      'rpc.grpc.status_code': 7,
      'http.response.status_code': 403,
    });
    expect(gwRejected.events.map((e) => e.name)).toEqual(['call.rejected']);
    const ping = byName(receiver.spans, 'test.v1.Library/Ping');
    expect(ping).toHaveLength(2);
    const traced = ping.find((p) => p.traceId === TRACE_ID)!;
    expect(traced.parentSpanId).toBe(PARENT_ID);
    expect(traced.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'test.v1.Library',
      'rpc.method': 'Ping',
      'rpc.grpc.status_code': 0,
      // OpenTelemetry's RPC server span: the server the client addressed (its :authority) and
      // the client's address (IPv4 form, though the listener is dual-stack)
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(running.base).port),
      'network.peer.address': '127.0.0.1',
    });
    expect(traced.attributes['network.peer.port']).toBeGreaterThan(0);
    expect(byName(receiver.spans, 'unknown/unknown')[0]?.attributes).toMatchObject({
      'rpc.grpc.status_code': 12,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(running.base).port),
      'network.peer.address': '127.0.0.1',
    });
    expect(traced.attributes['http.request.method']).toBeUndefined();
    expect(traced.status.code).toBe(0);
    const rejected = ping.find((p) => p.traceId !== TRACE_ID)!;
    expect(rejected.attributes['rpc.grpc.status_code']).toBe(7);
    expect(rejected.events).toEqual([
      {
        name: 'call.rejected',
        attributes: {
          'svc.rejection.status': 'PermissionDenied',
          'svc.rejection.middleware': 'testGuard',
          'svc.rejection.reason': 'deny_header',
          message: 'denied by test',
        },
      },
    ]);
    const fail = byName(receiver.spans, 'test.v1.Library/Fail')[0]!;
    expect([fail.traceId, fail.parentSpanId]).toEqual([failedTrace, '']);
    expect(fail.attributes['rpc.grpc.status_code']).toBe(13);
    // OTLP's STATUS_CODE_ERROR is 2.
    expect(fail.status.code).toBe(2);
    expect(byName(receiver.spans, 'test.v1.Library/ListBooks')).toHaveLength(2);
  });
});
