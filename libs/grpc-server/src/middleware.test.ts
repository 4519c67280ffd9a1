import { credentials, loadPackageDefinition, Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { boot } from '@svcboot/entry-core';
import { listServicesByReflection } from '@svcboot/testkit/grpc-reflection';
import { callContextOf, grpcEntry } from './index.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
} from './test-support/library-service.js';
import { startLibrary, unary } from './test-support/harness.js';

const META = [
  'x-request-id',
  'x-svc-app-domain',
  'x-svc-app-name',
  'x-svc-app-unix-time',
  'x-svc-app-version',
  'x-svc-received-time',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PAYLOAD_KEYS = [
  'apiMethod',
  'apiPath',
  'apiProtocol',
  'apiQuery',
  'grpcMethod',
  'grpcService',
  'grpcType',
  'gwMethod',
  'gwPath',
  'gwScheme',
  'gwUserAgent',
  'userAgent',
];

type Rec = Record<string, unknown> & {
  payloads: Record<string, unknown>;
  ids: Record<string, string>;
};

function recordsFor(records: Array<Record<string, unknown>>, requestId: string): Rec[] {
  return records.filter(
    (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === requestId,
  ) as Rec[];
}

describe('middleware on gRPC and gateway calls', () => {
  it('adds the meta headers, writes one record per call with every key, honours X-Request-Id, and counts metrics', async () => {
    const h = await startLibrary('    enableSvcGwOption: true\n');
    // gRPC, unary, with a fresh request id
    const g = await unary(h.client, 'Ping', { text: 'a' });
    expect(g.error).toBeUndefined();
    for (const k of META) expect(g.headers.get(k), k).toHaveLength(1);
    const grpcId = String(g.headers.get('x-request-id')[0]);
    expect(grpcId).toMatch(UUID);
    expect(g.headers.get('x-svc-app-name')[0]).toBe('library');
    expect(g.headers.get('x-svc-app-version')[0]).toBe('1.2.3');
    expect(g.headers.get('x-svc-app-domain')[0]).toBe('test');
    expect(String(g.headers.get('x-svc-received-time')[0])).toMatch(
      /^\d{4}-\d\d-\d\dT.*[+-]\d\d:\d\d$/,
    );
    expect(g.headers.get('content-type')[0]).toBe('application/grpc');

    // gRPC with an incoming request id, and a failing call
    const md = new Metadata();
    md.set('x-request-id', 'trace-42');
    const f = await unary(h.client, 'Fail', { code: 5 }, md);
    expect(f.error?.code).toBe(5);
    expect(f.error?.metadata.get('x-request-id')[0]).toBe('trace-42');

    // gateway, svc style: plain headers
    const res = await fetch(`${h.base}/v1/shelves/s1?tags=x`, {
      headers: { 'user-agent': 'rest-test/1', 'x-request-id': 'rest-7' },
    });
    expect(res.status).toBe(200);
    for (const k of META) expect(res.headers.get(k), k).toBeTruthy();
    expect(res.headers.get('x-request-id')).toBe('rest-7');
    // svc style emits unpopulated fields
    expect(await res.json()).toMatchObject({
      minBooks: '0',
      genre: 'GENRE_UNSPECIFIED',
      includeEmpty: false,
      filter: null,
    });

    // streaming RPCs over gRPC
    const streamIds: Record<string, string> = {};
    await new Promise<void>((resolve, reject) => {
      const s = h.client['ListBooks']!({ shelf: 's', count: 2 }) as NodeJS.ReadableStream & {
        on(e: 'metadata', f: (m: Metadata) => void): void;
      };
      s.on(
        'metadata',
        (m: Metadata) => (streamIds['ServerStream'] = String(m.get('x-request-id')[0])),
      );
      s.on('data', () => undefined);
      s.on('end', () => resolve());
      s.on('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      const s = h.client['Collect']!((err: ServiceError | null, resp: { hits: string[] }) => {
        if (err) return reject(err);
        expect(resp.hits).toEqual(['a', 'b']);
        resolve();
      }) as {
        write(m: unknown): void;
        end(): void;
        on(e: 'metadata', f: (m: Metadata) => void): void;
      };
      s.on(
        'metadata',
        (m: Metadata) => (streamIds['ClientStream'] = String(m.get('x-request-id')[0])),
      );
      s.write({ title: 'a' });
      s.write({ title: 'b' });
      s.end();
    });
    await new Promise<void>((resolve, reject) => {
      const s = h.client['Echo']!() as NodeJS.ReadWriteStream & {
        on(e: 'metadata', f: (m: Metadata) => void): void;
      };
      const got: unknown[] = [];
      s.on(
        'metadata',
        (m: Metadata) => (streamIds['BidiStream'] = String(m.get('x-request-id')[0])),
      );
      s.on('data', (d: unknown) => got.push(d));
      s.on('end', () => (got.length === 2 ? resolve() : reject(new Error(`echoed ${got.length}`))));
      s.on('error', reject);
      s.write({ title: 'x' } as never);
      s.write({ title: 'y' } as never);
      s.end();
    });

    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect(metrics).toMatch(
      /grpc_server_handled_total\{grpc_type="unary",grpc_service="test.v1.Library",grpc_method="Ping",grpc_code="OK"\} 1/,
    );
    expect(metrics).toMatch(
      /grpc_server_handled_total\{grpc_type="unary",grpc_service="test.v1.Library",grpc_method="Fail",grpc_code="NotFound"\} 1/,
    );
    expect(metrics).toMatch(
      /grpc_server_started_total\{grpc_type="server_stream",grpc_service="test.v1.Library",grpc_method="ListBooks"\} 1/,
    );
    expect(metrics).toMatch(/grpc_server_handling_seconds_bucket\{le="0.005",grpc_type="unary"/);
    expect(metrics).toMatch(
      /svc_call_res_code_total\{entry_name="lib",entry_type="GrpcEntry",domain="test",instance="[^"]+",grpc_service="test.v1.Library",grpc_method="GetShelf",grpc_type="UnaryServer",rest_method="GET",rest_path="\/v1\/\{name=shelves\/\*\}",res_code="OK"\} 1/,
    );

    const records = await h.stop();
    const boot = records.find(
      (r) =>
        r['operation'] === 'Bootstrap' &&
        (r['app'] as Record<string, string>)['entryType'] === 'GrpcEntry',
    ) as Rec;
    expect(boot.payloads).toEqual({
      docsEnabled: true,
      docsPath: '/docs/',
      grpcPort: h.port,
      gwPort: h.port,
      promEnabled: true,
      promPath: '/metrics',
      promPort: h.port,
      swEnabled: true,
      swPath: '/sw/',
    });

    const [ping] = recordsFor(records, grpcId);
    expect(ping).toBeDefined();
    expect(ping!.ids).toEqual({ eventId: grpcId, requestId: grpcId });
    expect(Object.keys(ping!.payloads)).toEqual(PAYLOAD_KEYS);
    expect(ping!.payloads).toMatchObject({
      apiMethod: 'POST',
      apiPath: '/test.v1.Library/Ping',
      apiProtocol: 'HTTP/2',
      grpcService: 'test.v1.Library',
      grpcMethod: 'Ping',
      grpcType: 'UnaryServer',
      gwMethod: '',
      gwPath: '',
    });
    expect(String(ping!.payloads['userAgent'])).toContain('grpc-node-js');
    expect(ping).toMatchObject({
      operation: '/test.v1.Library/Ping',
      resCode: 'OK',
      eventStatus: 'Ended',
    });
    expect(String(ping!['remoteAddr'])).toMatch(/^127\.0\.0\.1:\d+$/);

    const [fail] = recordsFor(records, 'trace-42');
    expect(fail).toMatchObject({ operation: '/test.v1.Library/Fail', resCode: 'NotFound' });

    const [rest] = recordsFor(records, 'rest-7');
    expect(rest).toMatchObject({ operation: '/test.v1.Library/GetShelf', resCode: 'OK' });
    expect(rest!.ids).toEqual({ eventId: 'rest-7', requestId: 'rest-7' });
    expect(Object.keys(rest!.payloads)).toEqual(PAYLOAD_KEYS);
    expect(rest!.payloads).toMatchObject({
      apiPath: '/test.v1.Library/GetShelf',
      apiQuery: 'tags=x',
      grpcType: 'UnaryServer',
      gwMethod: 'GET',
      gwPath: '/v1/shelves/s1',
      gwScheme: 'http',
      gwUserAgent: 'rest-test/1',
      userAgent: 'rest-test/1',
    });

    for (const [type, id] of Object.entries(streamIds)) {
      const [r] = recordsFor(records, id);
      expect(r?.payloads['grpcType'], type).toBe(type);
      expect(r?.resCode).toBe('OK');
    }
  });

  it('without enableSvcGwOption, response metadata reaches REST clients as Grpc-Metadata-* and empty fields are omitted', async () => {
    const h = await startLibrary();
    try {
      const res = await fetch(`${h.base}/v1/shelves/s1`);
      expect(res.headers.get('grpc-metadata-x-request-id')).toMatch(UUID);
      expect(res.headers.get('x-request-id')).toBeNull();
      expect(await res.json()).toEqual({
        name: 'shelves/s1',
        createdAt: '1970-01-02T00:00:00.500Z',
      });
    } finally {
      await h.stop();
    }
  });

  it('hands handlers their call context (and record) on gRPC and gateway calls', async () => {
    const seen: string[] = [];
    const app = await boot({
      configText:
        'logger:\n  - name: q\n    level: warn\nevent:\n  - name: e\n    outputPaths: [stderr]\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    eventEntry: e\n    generateUnboundMethods: true\n    middleware: { logging: { enabled: true } }\n',
      argv: [],
    });
    const entry = grpcEntry(app, 'g');
    entry.addService(libraryDefinition(), {
      ...libraryImplementation,
      Ping: (
        call: { metadata: Metadata; request: { text: string } },
        cb: (e: null, v: unknown) => void,
      ) => {
        const ctx = callContextOf(call);
        ctx?.event.addPair('who', call.request.text);
        seen.push(ctx ? ctx.info.apiProtocol : 'none');
        cb(null, { text: 'ok' });
      },
    });
    await app.bootstrap();
    try {
      const pkg = loadPackageDefinition(loadSync(libraryProto)) as unknown as {
        test: {
          v1: {
            Library: new (
              a: string,
              c: unknown,
              o: unknown,
            ) => Record<string, (...a: unknown[]) => unknown> & { close(): void };
          };
        };
      };
      const client = new pkg.test.v1.Library(
        `127.0.0.1:${entry.port}`,
        credentials.createInsecure(),
        { 'grpc.use_local_subchannel_pool': 1 },
      );
      await unary(client as never, 'Ping', { text: 'x' });
      client.close();
      await fetch(`http://127.0.0.1:${entry.port}/test.v1.Library/Ping`, {
        method: 'POST',
        body: '{"text":"y"}',
      });
      expect(seen).toEqual(['HTTP/2', 'HTTP/1.1']);
    } finally {
      await app.shutdown();
    }
  });
});

describe('health, readiness and reflection', () => {
  it('answers grpc.health.v1, /livez, /readyz, and lists services through reflection', async () => {
    const h = await startLibrary();
    try {
      const healthPkg = loadPackageDefinition(
        (h.entry as unknown as { health: { packageDefinition: never } }).health.packageDefinition,
      ) as unknown as {
        grpc: {
          health: {
            v1: {
              Health: new (
                a: string,
                c: unknown,
                o: unknown,
              ) => Record<string, (...a: unknown[]) => unknown> & { close(): void };
            };
          };
        };
      };
      const health = new healthPkg.grpc.health.v1.Health(
        `127.0.0.1:${h.port}`,
        credentials.createInsecure(),
        { 'grpc.use_local_subchannel_pool': 1 },
      );
      const ok = await unary(health as never, 'Check', { service: '' });
      expect(ok.response).toEqual({ status: 'SERVING' });
      const lib = await unary(health as never, 'Check', { service: 'test.v1.Library' });
      expect(lib.response).toEqual({ status: 'SERVING' });
      const unknown = await unary(health as never, 'Check', { service: 'no.Such' });
      expect(unknown.error?.code).toBe(5);
      health.close();

      expect((await fetch(`${h.base}/livez`)).status).toBe(200);
      expect((await fetch(`${h.base}/readyz`)).status).toBe(200);

      const services = await listServicesByReflection(`127.0.0.1:${h.port}`);
      expect(services).toContain('test.v1.Library');
      expect(services).toContain('grpc.health.v1.Health');
    } finally {
      const app = h.app;
      const stopping = h.stop();
      await stopping;
      expect(app.isReady()).toBe(false);
    }
  });

  it('reports not ready on /readyz and NOT_SERVING while draining', async () => {
    const h = await startLibrary();
    const healthPkg = loadPackageDefinition(
      (h.entry as unknown as { health: { packageDefinition: never } }).health.packageDefinition,
    ) as unknown as {
      grpc: {
        health: {
          v1: {
            Health: new (
              a: string,
              c: unknown,
              o: unknown,
            ) => Record<string, (...a: unknown[]) => unknown> & { close(): void };
          };
        };
      };
    };
    const health = new healthPkg.grpc.health.v1.Health(
      `127.0.0.1:${h.port}`,
      credentials.createInsecure(),
      { 'grpc.use_local_subchannel_pool': 1 },
    );
    const statuses: string[] = [];
    const watch = health['Watch']!({ service: '' }) as NodeJS.ReadableStream;
    watch.on('data', (m: { status: string }) => statuses.push(m.status));
    watch.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => watch.on('end', () => resolve()));
    const { waitFor } = await import('@svcboot/testkit');
    await waitFor('first Watch status', () => statuses.length > 0);
    const stopping = h.stop();
    await ended;
    expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
    health.close();
    await stopping;
  });
});
