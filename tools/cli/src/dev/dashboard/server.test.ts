import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../records.js';
import type { DevService } from '../services.js';
import { expandEnv } from './addresses.js';
import { readCatalog } from './catalog.js';
import { Dashboard, RecordHub } from './server.js';

/*
 * The dashboard's server-side pieces over HTTP, in this process: the explorer's proxy to a real
 * gRPC server (grpc-js, demo-chain's chain.proto) for a unary and a server-streaming method, its
 * refusals; traces from records sharing a trace id; the graph's edges from the system's calls and
 * from a client's target port, with the calls counted from the client's records.
 */

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const chainDir = path.resolve(cliDir, '../../apps/demo-chain');
const root = path.join(cliDir, '.test-tmp', `dashboard-${process.pid}-${Date.now()}`);

let server: grpc.Server;
let dashboard: Dashboard;
let port = 0;
const hub = new RecordHub();
const env: NodeJS.ProcessEnv = {};

function service(name: string, yaml: string, calls: DevService['calls'] = []): DevService {
  const configFile = path.join(root, `${name}.yaml`);
  writeFileSync(configFile, yaml);
  // The package folder is demo-chain's: its chain.proto, grpc-js and proto-loader.
  return {
    name,
    dir: chainDir,
    configFile,
    args: [],
    launch: { command: 'node', args: [], build: undefined, describe: 'none' },
    sourceDirs: [],
    calls,
  };
}

let services: DevService[] = [];

beforeAll(async () => {
  mkdirSync(root, { recursive: true });
  const def = protoLoader.loadSync('chain/v1/chain.proto', {
    includeDirs: [path.join(chainDir, 'api')],
  });
  const front = (
    grpc.loadPackageDefinition(def) as unknown as {
      chain: { v1: { Front: { service: grpc.ServiceDefinition } } };
    }
  ).chain.v1.Front.service;
  server = new grpc.Server();
  server.addService(front, {
    GetAccount(
      call: grpc.ServerUnaryCall<{ id: string }, unknown>,
      done: grpc.sendUnaryData<unknown>,
    ) {
      const trailer = new grpc.Metadata();
      trailer.set('x-saw-token', String(call.metadata.get('authorization')[0] ?? ''));
      if (call.request.id === 'missing')
        done({ code: grpc.status.NOT_FOUND, details: 'no account missing' }, null, trailer);
      else
        done(
          null,
          { id: call.request.id, name: `account ${call.request.id}`, balanceCents: 5 },
          trailer,
        );
    },
    WatchUsers(call: grpc.ServerWritableStream<{ count: number }, unknown>) {
      for (let i = 0; i < call.request.count; i++) call.write({ id: String(i), name: `user ${i}` });
      call.end();
    },
  });
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  env['FRONT_PORT'] = String(port);
  services = [
    service(
      'front',
      `grpc:
  - name: front
    port: \${FRONT_PORT}
    protos: { files: [api/chain/v1/chain.proto], includeDirs: [api] }
grpcclient:
  - name: users
    target: dns:///127.0.0.1:\${USERS_PORT:-8102}
httpclient:
  - name: billing
    baseUrl: http://127.0.0.1:9999
  - name: elsewhere
    baseUrl: https://api.example.com:8443/v1
`,
      [{ client: 'billing', service: 'billing' }],
    ),
    service('users', 'grpc:\n  - name: users\n    port: ${USERS_PORT:-8102}\n'),
    service('billing', 'httpserver:\n  - name: billing\n    port: 8103\n'),
  ];
  dashboard = await Dashboard.start({
    catalog: () => readCatalog(services),
    records: hub,
    services,
    pids: () => ({ front: 101, users: 102 }),
    env,
  });
});

afterAll(async () => {
  await dashboard?.close();
  server?.forceShutdown();
  rmSync(root, { recursive: true, force: true });
});

/** POSTs a call to the explorer and reads its JSON lines. */
async function call(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${dashboard.url}api/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    events:
      res.status === 200
        ? text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
    text,
  };
}

describe("the explorer's proxy (POST /api/call)", () => {
  it('calls a unary method on the service’s gRPC port, with the metadata given, and answers headers, the message, status and trailers', async () => {
    const r = await call({
      service: 'front',
      entry: 'front',
      method: '/chain.v1.Front/GetAccount',
      request: { id: '42' },
      metadata: { authorization: 'Bearer t0ken' },
    });
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/x-ndjson');
    expect(r.events[0]).toHaveProperty('headers');
    // Longs as text, defaults filled in (proto-loader's longs: String, defaults: true).
    expect(r.events[1]).toEqual({
      message: { id: '42', name: 'account 42', balanceCents: '5', users: null, billing: null },
    });
    expect(r.events[2]).toMatchObject({
      status: { code: 0, name: 'OK' },
      trailers: { 'x-saw-token': 'Bearer t0ken' },
    });
  });

  it("answers the service's error status with its details and no message", async () => {
    const r = await call({
      service: 'front',
      entry: 'front',
      method: '/chain.v1.Front/GetAccount',
      request: { id: 'missing' },
    });
    expect(r.events.some((e) => 'message' in e)).toBe(false);
    expect(r.events.at(-1)).toMatchObject({
      status: { code: grpc.status.NOT_FOUND, name: 'NOT_FOUND', details: 'no account missing' },
    });
  });

  it('streams each message of a server stream, then its status', async () => {
    const r = await call({
      service: 'front',
      entry: 'front',
      method: '/chain.v1.Front/WatchUsers',
      request: { count: 3 },
    });
    const messages = r.events
      .filter((e) => 'message' in e)
      .map((e) => (e['message'] as { name: string }).name);
    expect(messages).toEqual(['user 0', 'user 1', 'user 2']);
    expect(r.events.at(-1)).toMatchObject({ status: { code: 0 } });
  });

  it('refuses, saying why: an unknown method, service or entry, a body that is not a call, not JSON, another origin', async () => {
    const bad = await call({
      service: 'front',
      entry: 'front',
      method: '/chain.v1.Front/Nope',
      request: {},
    });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toBe(
      "front: no method /chain.v1.Front/Nope in grpc[front]'s protos",
    );
    expect((await call({ service: 'nobody', entry: 'x', method: '/a/b' })).text).toContain(
      'no service \\"nobody\\" in svc dev (front, users, billing)',
    );
    expect((await call({ service: 'billing', entry: 'billing', method: '/a/b' })).text).toContain(
      'billing: no grpc entry \\"billing\\"',
    );
    expect(
      (await call({ service: 'front', entry: 'front', method: '/a/b', request: [1] })).status,
    ).toBe(400);
    const form = await fetch(`${dashboard.url}api/call`, { method: 'POST', body: 'a=b' });
    expect(form.status).toBe(415);
    const foreign = await call(
      { service: 'front', entry: 'front', method: '/chain.v1.Front/GetAccount', request: {} },
      { origin: 'http://evil.example' },
    );
    expect(foreign.status).toBe(403);
  });
});

/** A record as entry-core writes it (encode.ts), for `service`'s entry. */
function record(o: {
  entry: string;
  type: string;
  op: string;
  traceId?: string;
  start: number;
  ms: number;
  code?: string;
}): CallRecord {
  return {
    startTime: new Date(o.start).toISOString(),
    endTime: new Date(o.start + o.ms).toISOString(),
    elapsedNano: o.ms * 1e6,
    ids: {
      eventId: `e-${o.start}`,
      requestId: `r-${o.traceId ?? 'none'}`,
      ...(o.traceId ? { traceId: o.traceId, spanId: `s-${o.start}` } : {}),
    },
    app: { appName: 'x', entryName: o.entry, entryType: o.type },
    operation: o.op,
    resCode: o.code ?? 'OK',
  };
}

describe('traces and the graph', () => {
  const t0 = Date.now() - 5_000;
  beforeAll(() => {
    // One GetAccount across three services (the order they are written is the order they end).
    hub.add(
      'users',
      record({
        entry: 'users',
        type: 'GrpcEntry',
        op: '/chain.v1.Users/GetUser',
        traceId: 'T1',
        start: t0 + 20,
        ms: 30,
      }),
    );
    hub.add(
      'front',
      record({
        entry: 'users',
        type: 'GrpcClientEntry',
        op: '/chain.v1.Users/GetUser',
        traceId: 'T1',
        start: t0 + 10,
        ms: 50,
      }),
    );
    hub.add(
      'billing',
      record({
        entry: 'billing',
        type: 'HttpEntry',
        op: 'GET /v1/balance/:user',
        traceId: 'T1',
        start: t0 + 62,
        ms: 8,
        code: '500',
      }),
    );
    hub.add(
      'front',
      record({
        entry: 'billing',
        type: 'HttpClientEntry',
        op: 'GET /v1/balance/7',
        traceId: 'T1',
        start: t0 + 60,
        ms: 12,
        code: '500',
      }),
    );
    hub.add(
      'front',
      record({
        entry: 'front',
        type: 'GrpcEntry',
        op: '/chain.v1.Front/GetAccount',
        traceId: 'T1',
        start: t0,
        ms: 80,
      }),
    );
    // Another trace, later; and a Bootstrap record (no request id): not a call.
    hub.add(
      'front',
      record({
        entry: 'front',
        type: 'GrpcEntry',
        op: '/chain.v1.Front/GetAccount',
        traceId: 'T2',
        start: t0 + 1000,
        ms: 4,
      }),
    );
    hub.add('users', {
      ...record({ entry: 'users', type: 'GrpcEntry', op: 'Bootstrap', start: t0 - 100, ms: 1 }),
      ids: { eventId: 'b' },
    });
  });

  it("gives one trace's records as a waterfall in the order they started, and lists traces newest first", async () => {
    const trace = (await (await fetch(`${dashboard.url}api/traces/T1`)).json()) as {
      durationMs: number;
      records: Array<{
        service: string;
        entry: string;
        offsetMs: number;
        durationMs: number;
        status: string;
      }>;
    };
    expect(
      trace.records.map((s) => `${s.service}/${s.entry}@${s.offsetMs}+${s.durationMs}`),
    ).toEqual([
      'front/front@0+80',
      'front/users@10+50',
      'users/users@20+30',
      'front/billing@60+12',
      'billing/billing@62+8',
    ]);
    expect(trace.durationMs).toBe(80);
    expect(trace.records.filter((s) => s.status === 'error').map((s) => s.service)).toEqual([
      'front',
      'billing',
    ]);
    const missing = await fetch(`${dashboard.url}api/traces/nope`);
    expect(missing.status).toBe(404);
    const list = (await (await fetch(`${dashboard.url}api/traces`)).json()) as {
      traces: Array<{
        traceId: string;
        operation: string;
        services: string[];
        records: number;
        spans: number;
        errors: number;
      }>;
    };
    expect(list.traces.map((t) => t.traceId)).toEqual(['T2', 'T1']);
    expect(list.traces[1]).toMatchObject({
      operation: '/chain.v1.Front/GetAccount',
      services: ['front', 'users', 'billing'],
      records: 5,
      spans: 0,
      errors: 2,
    });
  });

  it("takes the services' spans as a Zipkin collector does (POST /api/v2/spans) and gives them as a tree", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const us = t0 * 1000;
    // Zipkin v2 JSON as middleware-trace's exporter.zipkin sends it: sent out of order, in two posts.
    const span = (
      id: string,
      parentId: string | undefined,
      service: string,
      name: string,
      kind: string,
      at: number,
      dur: number,
      tags: Record<string, string> = {},
    ) => ({
      traceId: trace,
      id,
      ...(parentId ? { parentId } : {}),
      name,
      kind,
      timestamp: us + at * 1000,
      duration: dur * 1000,
      localEndpoint: { serviceName: service },
      tags,
    });
    const post = (body: unknown) =>
      fetch(`${dashboard.url}api/v2/spans`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(
      (
        await post([
          span(
            '00000000000000c1',
            '00000000000000b1',
            'users',
            'chain.v1.Users/GetUser',
            'SERVER',
            20,
            30,
          ),
        ])
      ).status,
    ).toBe(202);
    expect(
      (
        await post([
          span('00000000000000b2', '00000000000000a1', 'front', 'GET', 'CLIENT', 60, 12, {
            error: 'HTTP 500',
          }),
          span(
            '00000000000000a1',
            undefined,
            'front',
            'chain.v1.Front/GetAccount',
            'SERVER',
            0,
            80,
          ),
          span(
            '00000000000000b1',
            '00000000000000a1',
            'front',
            'chain.v1.Users/GetUser',
            'CLIENT',
            10,
            50,
          ),
        ])
      ).status,
    ).toBe(202);
    expect((await post({ not: 'a list' })).status).toBe(400);
    const got = (await (await fetch(`${dashboard.url}api/traces/${trace}`)).json()) as {
      records: unknown[];
      spans: Array<{
        service: string;
        name: string;
        depth: number;
        offsetMs: number;
        durationMs: number;
        error: boolean;
      }>;
    };
    expect(got.records).toEqual([]);
    expect(
      got.spans.map(
        (s) =>
          `${'  '.repeat(s.depth)}${s.service} ${s.name} @${s.offsetMs}+${s.durationMs}${s.error ? ' error' : ''}`,
      ),
    ).toEqual([
      'front chain.v1.Front/GetAccount @0+80',
      '  front chain.v1.Users/GetUser @10+50',
      '    users chain.v1.Users/GetUser @20+30',
      '  front GET @60+12 error',
    ]);
  });

  it("draws an edge per client entry: to the system's callee, to the service on the target's port, or to the target outside", async () => {
    const graph = (await (await fetch(`${dashboard.url}api/graph`)).json()) as {
      nodes: Array<{
        name: string;
        pid: number | null;
        calls: number;
        errors: number;
        p50Ms: number;
      }>;
      edges: Array<{
        from: string;
        to: string;
        internal: boolean;
        client: string;
        calls: number;
        errors: number;
      }>;
    };
    expect(graph.edges).toEqual([
      // users: found by the target's port (USERS_PORT unset: its default 8102, users' port).
      {
        from: 'front',
        to: 'users',
        internal: true,
        client: 'users',
        kind: 'grpcclient',
        calls: 1,
        errors: 0,
        perMinute: 1,
      },
      // billing: named by the system's calls (its baseUrl's port is no service's).
      {
        from: 'front',
        to: 'billing',
        internal: true,
        client: 'billing',
        kind: 'httpclient',
        calls: 1,
        errors: 1,
        perMinute: 1,
      },
      {
        from: 'front',
        to: 'https://api.example.com:8443/v1',
        internal: false,
        client: 'elsewhere',
        kind: 'httpclient',
        calls: 0,
        errors: 0,
        perMinute: 0,
      },
    ]);
    const front = graph.nodes.find((n) => n.name === 'front');
    // Its server entry's two calls (80 ms and 4 ms), not its client records.
    expect(front).toMatchObject({ pid: 101, calls: 2, errors: 0, p50Ms: 4 });
    expect(graph.nodes.find((n) => n.name === 'users')).toMatchObject({ calls: 1 });
    expect(graph.nodes.find((n) => n.name === 'billing')).toMatchObject({ calls: 1, errors: 1 });
    expect(graph.nodes.find((n) => n.name === 'billing')?.pid ?? undefined).toBeUndefined();
  });

  it('filters live calls by method and request id', async () => {
    const abort = new AbortController();
    const res = await fetch(`${dashboard.url}api/records?method=GetUser&requestId=r-T1`, {
      signal: abort.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    // The kept records come at once: read until both GetUser records of T1 are there.
    while ((text.match(/event: record/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    const ops = [...text.matchAll(/^data: (.*)$/gm)].map((m) => {
      const r = JSON.parse(m[1] ?? '') as { service: string; record: CallRecord };
      return `${r.service} ${String(r.record['operation'])}`;
    });
    expect(ops).toEqual(['users /chain.v1.Users/GetUser', 'front /chain.v1.Users/GetUser']);
  });
});

describe('expandEnv', () => {
  it('reads ${VAR} and ${VAR:-default} as entry-core does, an empty value taking the default', () => {
    expect(expandEnv('${A}:${B:-8102}:${C:-x}', { A: '1', C: '' })).toBe('1:8102:x');
  });
});
