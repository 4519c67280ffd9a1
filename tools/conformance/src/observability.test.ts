import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL, applying, expectStatus, header, target } from './suite.js';
import {
  HTTP_TRANSPORTS,
  isBuiltin,
  methodOf,
  recordsHttpStatus,
  startTarget,
  type TransportName,
} from './transports.js';

/** The middleware suite (see suite.ts): meta, logging and prom, and trace (the server span of each call, its attributes and propagation), on every transport. */

/** Why a case about the answer's headers does not apply to a WebSocket call. */
const WS_HEADERS =
  "a WebSocket call's answer has no headers (the upgrade is answered 101 before the call runs), and this case is about them";

describe.each(applying('meta on %s', ALL, { websocket: WS_HEADERS }))('meta on %s', (t) => {
  const get = target(t, '');
  it('answers with the request id it was given and the app headers', async () => {
    const a = await get().call({ headers: { 'x-request-id': 'req-42' } });
    expectStatus(t, a, 'OK');
    expect([
      header(t, a, 'X-Request-Id'),
      header(t, a, 'X-Svc-App-Name'),
      header(t, a, 'X-Svc-App-Version'),
    ]).toEqual(['req-42', 'conformance', '1.2.3']);
    // An id with characters a header must not echo is replaced by a UUIDv4.
    const b = await get().call({ headers: { 'x-request-id': 'a b' } });
    expect(header(t, b, 'X-Request-Id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

/**
 * The golden record of a call (SPEC.md 2.10): its keys in this order (a successful call has no
 * `error` line, the variant that has one puts it after `payloads`).
 */
const GOLDEN_RECORD_KEYS = [
  'endTime',
  'startTime',
  'elapsedNano',
  'timezone',
  'ids',
  'app',
  'env',
  'payloads',
  'counters',
  'pairs',
  'timing',
  'remoteAddr',
  'operation',
  'resCode',
  'eventStatus',
];

/**
 * The payload keys of a call's record, by the kind of entry that served it. A grpc entry's calls
 * (whatever the protocol; gw* describe the HTTP side of a gateway call): SPEC.md 2.10's list. An
 * httpserver entry's: the five rk-gin's logging middleware records (rk-entry's middleware/log
 * `Before`: apiPath, apiMethod, apiQuery, apiProtocol, userAgent).
 */
const GOLDEN_PAYLOAD_KEYS = {
  grpc: [
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
  ],
  httpserver: ['apiMethod', 'apiPath', 'apiProtocol', 'apiQuery', 'userAgent'],
};

const servedByHttpserver = (t: TransportName): boolean =>
  t === 'httpserver' || t === 'builtin-http';

describe.each(ALL)('logging and prom on %s', (t) => {
  it('writes one record per call, with its operation and result, and counts it', async () => {
    const started = await startTarget(t, '');
    let records: Array<Record<string, unknown>>;
    try {
      expectStatus(t, await started.call({ headers: { 'x-request-id': 'rec-1' } }), 'OK');
      const metrics = await started.metrics();
      expect(metrics).toMatch(/svc_call_res_code_total\{[^}]*entry_name="conf"[^}]*\} 1/);
    } finally {
      records = await started.stop();
    }
    const calls = records.filter(
      (r) => (r['ids'] as { requestId?: string })?.requestId === 'rec-1',
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      operation: started.operation,
      resCode: recordsHttpStatus(t) ? '200' : 'OK',
      eventStatus: 'Ended',
    });
    // The golden record: the keys in their order, and the payload keys of the entry's kind (the
    // references list them without an order of their own).
    expect(Object.keys(calls[0] ?? {})).toEqual(GOLDEN_RECORD_KEYS);
    expect(Object.keys((calls[0]?.['payloads'] ?? {}) as object).sort()).toEqual(
      [...GOLDEN_PAYLOAD_KEYS[servedByHttpserver(t) ? 'httpserver' : 'grpc']].sort(),
    );
    // The client's address in its IPv4 form on every transport, whether the listener is
    // dual-stack (a grpc entry's: Node reports `::ffff:127.0.0.1`) or IPv4 only (the httpserver's).
    expect(calls[0]?.['remoteAddr']).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe.each(applying('trace on %s', ALL, { websocket: WS_HEADERS }))('trace on %s', (t) => {
  const get = target(t, '      trace: { enabled: true }');
  it("continues the caller's W3C trace and names it in X-Trace-Id", async () => {
    const a = await get().call({ headers: { traceparent: TRACEPARENT } });
    expectStatus(t, a, 'OK');
    expect(header(t, a, 'X-Trace-Id')).toBe('0af7651916cd43dd8448eb211c80319c');
    const fresh = await get().call();
    expect(header(t, fresh, 'X-Trace-Id')).toMatch(/^[0-9a-f]{32}$/);
    expect(header(t, fresh, 'X-Trace-Id')).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });
});

const PARENT_ID = 'b7ad6b7169203331';

/** The spans a file exporter wrote (one JSON line each). */
async function spansIn(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A server span's name (OpenTelemetry's conventions): `package.Service/Method` for an RPC, `METHOD route` for HTTP. */
function spanName(t: TransportName): string {
  if (isBuiltin(t)) return 'GET /svc/v1/info';
  return t === 'httpserver' ? 'GET /v1/say' : `conformance.v1.Echo/${methodOf(t)}`;
}

describe.each(
  applying('trace spans on %s', ALL, {
    websocket: `${WS_HEADERS} (X-Trace-Id names the trace of a refused or failed call)`,
  }),
)('trace spans on %s', (t) => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-conformance-spans-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const key = { 'x-api-key': 'k-123' };

  it("exports a server span per call, the caller's child, named and with the status code; the record carries its ids; X-Trace-Id and a call.rejected event on a refusal; an error status when the handler throws", async () => {
    const spans = path.join(dir, `${t}.jsonl`);
    const started = await startTarget(
      t,
      `      auth: { enabled: true, apiKey: [k-123] }
      trace:
        enabled: true
        exporter: { file: { enabled: true, outputPath: "${spans}" } }`,
    );
    let records: Array<Record<string, unknown>>;
    let refusedTrace: string | undefined;
    let thrownTrace: string | undefined;
    try {
      const ok = await started.call({
        headers: { ...key, traceparent: TRACEPARENT, 'x-request-id': 'tr-ok' },
      });
      expectStatus(t, ok, 'OK');
      const refused = await started.call({ headers: { 'x-request-id': 'tr-no' } });
      expectStatus(t, refused, 'Unauthenticated');
      refusedTrace = header(t, refused, 'X-Trace-Id');
      expect(refusedTrace).toMatch(/^[0-9a-f]{32}$/);
      if (!isBuiltin(t)) {
        const thrown = await started.call({ text: 'throw', headers: key });
        expectStatus(t, thrown, 'Internal');
        thrownTrace = header(t, thrown, 'X-Trace-Id');
        expect(thrownTrace).toMatch(/^[0-9a-f]{32}$/);
      }
    } finally {
      // the exporter is flushed at shutdown
      records = await started.stop();
    }
    const all = await spansIn(spans);
    const server = all.filter((x) => x['kind'] === 'server');
    const ok = server.find((x) => x['traceId'] === '0af7651916cd43dd8448eb211c80319c');
    expect(ok).toMatchObject({
      name: spanName(t),
      parentSpanId: PARENT_ID,
      status: { code: 'unset' },
    });
    const attributes = ok?.['attributes'] as Record<string, unknown>;
    if (
      t === 'grpc' ||
      t === 'grpc-web' ||
      t === 'gateway' ||
      t === 'sse' ||
      t === 'grpcclient' ||
      t === 'httpclient'
    )
      expect(attributes).toMatchObject({
        'rpc.system': 'grpc',
        'rpc.service': 'conformance.v1.Echo',
        'rpc.method': methodOf(t),
        'rpc.grpc.status_code': 0,
      });
    // (an httpclient entry's calls are the gateway's)
    if (HTTP_TRANSPORTS.includes(t) || t === 'httpclient')
      expect(attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'url.path': isBuiltin(t) ? '/svc/v1/info' : '/v1/say',
      });
    // OpenTelemetry's server span conventions, HTTP and RPC alike (semantic-conventions
    // docs/rpc/rpc-spans.md: server.address Required, server.port Conditionally Required on an
    // RPC server span): the server the client addressed (Host, gRPC's :authority), and the
    // client's address in its IPv4 form whatever the listener (no IPv4-mapped `::ffff:`).
    expect(attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(started.base).port),
      'network.peer.address': '127.0.0.1',
    });
    expect(attributes['network.peer.port']).toBeGreaterThan(0);
    expect(ok?.['resource']).toMatchObject({
      'service.name': 'conformance',
      'service.version': '1.2.3',
    });
    const rec = records.find((r) => (r['ids'] as { requestId?: string })?.requestId === 'tr-ok');
    expect(rec?.['ids']).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: ok?.['spanId'],
    });
    const refused = server.find((x) => x['traceId'] === refusedTrace);
    expect(refused?.['parentSpanId']).toBe('');
    expect(
      ((refused?.['events'] ?? []) as Array<{ name: string; attributes: unknown }>).map((e) => [
        e.name,
        e.attributes,
      ]),
    ).toEqual([
      [
        'call.rejected',
        expect.objectContaining({
          'svc.rejection.status': 'Unauthenticated',
          'svc.rejection.middleware': 'auth',
        }),
      ],
    ]);
    if (thrownTrace !== undefined)
      expect(server.find((x) => x['traceId'] === thrownTrace)).toMatchObject({
        status: { code: 'error' },
        events: [expect.objectContaining({ name: 'exception' })],
      });
  });

  it('sampleRatio 0 exports no span of a new trace but still gives the call its ids; a sampled incoming parent is followed', async () => {
    const spans = path.join(dir, `${t}-sampled.jsonl`);
    const started = await startTarget(
      t,
      `      trace:
        enabled: true
        sampleRatio: 0
        exporter: { file: { enabled: true, outputPath: "${spans}" } }`,
    );
    let unsampled: string | undefined;
    try {
      const fresh = await started.call();
      unsampled = header(t, fresh, 'X-Trace-Id');
      expect(unsampled).toMatch(/^[0-9a-f]{32}$/);
      expectStatus(t, await started.call({ headers: { traceparent: TRACEPARENT } }), 'OK');
    } finally {
      await started.stop();
    }
    const server = (await spansIn(spans)).filter((x) => x['kind'] === 'server');
    expect(server.map((x) => [x['traceId'], x['parentSpanId']])).toEqual([
      ['0af7651916cd43dd8448eb211c80319c', PARENT_ID],
    ]);
  });

  it('propagator b3: reads B3 headers (multi and single) instead of traceparent', async () => {
    const started = await startTarget(t, '      trace: { enabled: true, propagator: b3 }');
    try {
      const multi = await started.call({
        headers: {
          'x-b3-traceid': '0af7651916cd43dd8448eb211c80319c',
          'x-b3-spanid': PARENT_ID,
          'x-b3-sampled': '1',
        },
      });
      const single = await started.call({
        headers: { b3: `0af7651916cd43dd8448eb211c80319c-${PARENT_ID}-1` },
      });
      const w3c = await started.call({ headers: { traceparent: TRACEPARENT } });
      expect([multi, single].map((a) => header(t, a, 'X-Trace-Id'))).toEqual([
        '0af7651916cd43dd8448eb211c80319c',
        '0af7651916cd43dd8448eb211c80319c',
      ]);
      expect(header(t, w3c, 'X-Trace-Id')).toMatch(/^[0-9a-f]{32}$/);
      expect(header(t, w3c, 'X-Trace-Id')).not.toBe('0af7651916cd43dd8448eb211c80319c');
    } finally {
      await started.stop();
    }
  });
});
