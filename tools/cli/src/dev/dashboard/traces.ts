import type { CallRecord } from '../records.js';
import type { LiveRecord } from './server.js';
import type { StoredSpan } from './spans.js';

/*
 * Traces from the call records svc dev keeps: every record of a call carries the W3C trace id its
 * trace middleware gave it (`ids.traceId`), in the service that took the call and in each client
 * entry that made one on its behalf, so one trace's records across services are that request's
 * spans. Each becomes a bar of the waterfall: where it started after the trace's first record and
 * how long it took. The spans the services' tracers sent svc dev (spans.ts) come with them, as a
 * tree: each under its parent, in the order they started.
 */

export interface TraceRecord {
  seq: number;
  service: string;
  /** The entry that wrote the record and its type (GrpcEntry, GrpcClientEntry, HttpEntry…). */
  entry: string;
  entryType: string;
  operation: string;
  resCode: string;
  status: 'ok' | 'error';
  spanId: string;
  requestId: string;
  /** ms after the trace's first start. */
  offsetMs: number;
  durationMs: number;
}

/** One span of a service's tracer, in the trace's tree. */
export interface TraceSpan {
  service: string;
  name: string;
  kind: string;
  spanId: string;
  parentId: string;
  /** 0 for a root (or a span whose parent svc dev did not get), 1 under it… */
  depth: number;
  offsetMs: number;
  durationMs: number;
  error: boolean;
}

export interface Trace {
  traceId: string;
  /** The first record's or span's start, ISO. */
  startTime: string;
  durationMs: number;
  /** The call records of the trace, in the order they started. */
  records: TraceRecord[];
  /** The spans the services sent svc dev, depth first (empty when none came). */
  spans: TraceSpan[];
}

export interface TraceSummary {
  traceId: string;
  /** The operation of the record that started first (the call that began it). */
  operation: string;
  service: string;
  startTime: string;
  durationMs: number;
  services: string[];
  records: number;
  spans: number;
  errors: number;
}

/** The trace id of a record (empty when its entry traces nothing). */
export function traceIdOf(record: CallRecord): string {
  const ids = record['ids'];
  if (ids === null || typeof ids !== 'object') return '';
  const t = (ids as Record<string, unknown>)['traceId'];
  return typeof t === 'string' ? t : '';
}

function text(record: CallRecord, key: string): string {
  const v = record[key];
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function app(record: CallRecord, key: string): string {
  const a = record['app'];
  if (a === null || typeof a !== 'object') return '';
  const v = (a as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : '';
}

function timesOf(r: LiveRecord): { start: number; end: number } {
  const end = Date.parse(text(r.record, 'endTime'));
  const elapsed = Number(r.record['elapsedNano']) / 1e6;
  const start = Date.parse(text(r.record, 'startTime'));
  // startTime is to the ms; elapsedNano is finer: end − elapsed when both are there.
  if (Number.isFinite(end) && Number.isFinite(elapsed)) return { start: end - elapsed, end };
  return { start, end: Number.isFinite(end) ? end : start };
}

/** One trace's records and spans as a waterfall; undefined when none is kept. */
export function traceOf(
  records: readonly LiveRecord[],
  spans: readonly StoredSpan[],
  traceId: string,
): Trace | undefined {
  const mine = records
    .filter((r) => traceIdOf(r.record) === traceId)
    .map((r) => ({ r, ...timesOf(r) }))
    .filter((x) => Number.isFinite(x.start))
    .sort((a, b) => a.start - b.start || a.r.seq - b.r.seq);
  const its = spans.filter((s) => s.traceId === traceId);
  if (mine.length === 0 && its.length === 0) return undefined;
  const starts = [...mine.map((x) => x.start), ...its.map((s) => s.startUs / 1000)];
  const ends = [...mine.map((x) => x.end), ...its.map((s) => (s.startUs + s.durationUs) / 1000)];
  const first = Math.min(...starts);
  const ids = (rec: CallRecord): Record<string, unknown> =>
    (rec['ids'] ?? {}) as Record<string, unknown>;
  return {
    traceId,
    startTime: new Date(first).toISOString(),
    durationMs: round(Math.max(...ends) - first),
    records: mine.map(({ r, start, end }) => ({
      seq: r.seq,
      service: r.service,
      entry: app(r.record, 'entryName'),
      entryType: app(r.record, 'entryType'),
      operation: text(r.record, 'operation'),
      resCode: text(r.record, 'resCode'),
      status: r.status,
      spanId: String(ids(r.record)['spanId'] ?? ''),
      requestId: String(ids(r.record)['requestId'] ?? ''),
      offsetMs: round(start - first),
      durationMs: round(end - start),
    })),
    spans: spanTree(its, first),
  };
}

/** The spans depth first: roots (and orphans) in the order they started, each child under its parent. */
function spanTree(spans: readonly StoredSpan[], firstMs: number): TraceSpan[] {
  const byStart = [...spans].sort((a, b) => a.startUs - b.startUs);
  const ids = new Set(byStart.map((s) => s.spanId));
  const children = new Map<string, StoredSpan[]>();
  for (const s of byStart) {
    const parent = s.parentId !== '' && ids.has(s.parentId) ? s.parentId : '';
    let list = children.get(parent);
    if (list === undefined) children.set(parent, (list = []));
    list.push(s);
  }
  const out: TraceSpan[] = [];
  const seen = new Set<string>();
  const visit = (s: StoredSpan, depth: number): void => {
    if (seen.has(s.spanId)) return;
    seen.add(s.spanId);
    out.push({
      service: s.service,
      name: s.name,
      kind: s.kind,
      spanId: s.spanId,
      parentId: s.parentId,
      depth,
      offsetMs: round(s.startUs / 1000 - firstMs),
      durationMs: round(s.durationUs / 1000),
      error: s.error,
    });
    for (const c of children.get(s.spanId) ?? []) visit(c, depth + 1);
  };
  for (const root of children.get('') ?? []) visit(root, 0);
  return out;
}

/** The traces of the records kept, newest first (at most `limit`). */
export function recentTraces(
  records: readonly LiveRecord[],
  spans: readonly StoredSpan[],
  limit = 50,
): TraceSummary[] {
  const spanCount = new Map<string, number>();
  for (const s of spans) spanCount.set(s.traceId, (spanCount.get(s.traceId) ?? 0) + 1);
  const byTrace = new Map<string, LiveRecord[]>();
  for (const r of records) {
    const id = traceIdOf(r.record);
    if (id === '') continue;
    let list = byTrace.get(id);
    if (list === undefined) byTrace.set(id, (list = []));
    list.push(r);
  }
  const out: TraceSummary[] = [];
  for (const [traceId, list] of byTrace) {
    const trace = traceOf(list, [], traceId);
    const root = trace?.records[0];
    if (trace === undefined || root === undefined) continue;
    out.push({
      traceId,
      operation: root.operation,
      service: root.service,
      startTime: trace.startTime,
      durationMs: trace.durationMs,
      services: [...new Set(trace.records.map((s) => s.service))],
      records: trace.records.length,
      spans: spanCount.get(traceId) ?? 0,
      errors: trace.records.filter((s) => s.status === 'error').length,
    });
  }
  return out.sort((a, b) => b.startTime.localeCompare(a.startTime)).slice(0, limit);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
