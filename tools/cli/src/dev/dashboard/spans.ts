/*
 * The spans svc dev's services send it: each traced entry gets a Zipkin exporter pointed at the
 * dashboard (`POST /api/v2/spans`, Zipkin v2 JSON, what middleware-trace's `exporter.zipkin`
 * sends) through SVC_SET, besides the exporters of its boot.yaml. The last `keep` are kept.
 */

export interface StoredSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentId: string;
  name: string;
  /** SERVER, CLIENT, INTERNAL… ('' when not given). */
  kind: string;
  /** The service (the tracer's service.name: the app's name). */
  service: string;
  /** Start, µs since the epoch, and duration, µs. */
  startUs: number;
  durationUs: number;
  /** Whether the span says it failed (an `error` tag, as the Zipkin exporter writes it). */
  error: boolean;
  tags: Record<string, string>;
}

const HEX = /^[0-9a-f]{16,32}$/;

/** The spans of a Zipkin v2 JSON body; throws when it is not a list of spans. */
export function parseZipkin(body: unknown): StoredSpan[] {
  if (!Array.isArray(body)) throw new Error('expected a JSON list of Zipkin v2 spans');
  const out: StoredSpan[] = [];
  for (const s of body) {
    if (s === null || typeof s !== 'object') continue;
    const o = s as Record<string, unknown>;
    const traceId = typeof o['traceId'] === 'string' ? o['traceId'].toLowerCase() : '';
    const spanId = typeof o['id'] === 'string' ? o['id'].toLowerCase() : '';
    if (!HEX.test(traceId) || !HEX.test(spanId)) continue;
    const tags: Record<string, string> = {};
    if (o['tags'] !== null && typeof o['tags'] === 'object')
      for (const [k, v] of Object.entries(o['tags'] as Record<string, unknown>))
        tags[k] = String(v);
    const endpoint = (o['localEndpoint'] ?? {}) as { serviceName?: unknown };
    out.push({
      traceId: traceId.padStart(32, '0'),
      spanId,
      parentId: typeof o['parentId'] === 'string' ? o['parentId'].toLowerCase() : '',
      name: typeof o['name'] === 'string' ? o['name'] : '',
      kind: typeof o['kind'] === 'string' ? o['kind'] : '',
      service: typeof endpoint.serviceName === 'string' ? endpoint.serviceName : '',
      startUs: Number(o['timestamp']) || 0,
      durationUs: Number(o['duration']) || 0,
      error: 'error' in tags,
      tags,
    });
  }
  return out;
}

export class SpanStore {
  private readonly spans: StoredSpan[] = [];

  constructor(private readonly keep = 5000) {}

  add(spans: readonly StoredSpan[]): void {
    this.spans.push(...spans);
    if (this.spans.length > this.keep) this.spans.splice(0, this.spans.length - this.keep);
  }

  list(): readonly StoredSpan[] {
    return this.spans;
  }
}
