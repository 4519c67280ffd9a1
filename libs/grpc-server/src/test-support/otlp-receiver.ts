import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * The OpenTelemetry protocol's trace definitions, vendored for tests from the npm package
 * @opentelemetry/exporter-trace-otlp-proto@0.27.0 (build/protos, Apache-2.0, see LICENSE there):
 * the newest release that shipped the .proto files. Field numbers are the ones OTLP keeps.
 */
const PROTO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'otlp-proto');

/** One span as the receiver decoded it: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message: string };
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>` (the exporter adds `/v1/traces`). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Headers of the export requests, in order. */
  readonly requests: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

let requestType: protobuf.Type | undefined;
function exportRequestType(): protobuf.Type {
  if (requestType) return requestType;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  return requestType;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
}
type KeyValue = { key: string; value?: AnyValue };

function plainValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = plainValue(kv.value);
  return out;
}

const hex = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('hex') : '');

/** Decodes an ExportTraceServiceRequest (OTLP/HTTP protobuf body) into spans. */
export function decodeExport(body: Uint8Array): ReceivedSpan[] {
  const type = exportRequestType();
  const req = type.toObject(type.decode(body), { longs: String, oneofs: false }) as {
    resourceSpans?: Array<{
      resource?: { attributes?: KeyValue[] };
      instrumentationLibrarySpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
    }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ils of rs.instrumentationLibrarySpans ?? [])
      for (const s of ils.spans ?? []) {
        const status = (s['status'] ?? {}) as { code?: number; message?: string };
        spans.push({
          traceId: hex(s['traceId'] as Uint8Array),
          spanId: hex(s['spanId'] as Uint8Array),
          parentSpanId: hex(s['parentSpanId'] as Uint8Array | undefined),
          name: s['name'] as string,
          kind: (s['kind'] as number | undefined) ?? 0,
          attributes: attributesOf(s['attributes'] as KeyValue[] | undefined),
          status: { code: status.code ?? 0, message: status.message ?? '' },
          events: ((s['events'] as Array<{ name: string; attributes?: KeyValue[] }>) ?? []).map(
            (e) => ({ name: e.name, attributes: attributesOf(e.attributes) }),
          ),
          resource,
        });
      }
  }
  return spans;
}

/** An OTLP/HTTP trace receiver on 127.0.0.1: `POST /v1/traces` with a protobuf body. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(415).end();
        return;
      }
      requests.push({ ...req.headers });
      try {
        spans.push(...decodeExport(Buffer.concat(chunks)));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
