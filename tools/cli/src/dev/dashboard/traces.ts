import type { CallRecord } from '../records.js';
import type { LiveRecord } from './server.js';

/*
 * Traces from the call records svc dev keeps: every record of a call carries the W3C trace id its
 * trace middleware gave it (`ids.traceId`), in the service that took the call and in each client
 * entry that made one on its behalf, so one trace's records across services are that request's
 * spans. Each becomes a bar of the waterfall: where it started after the trace's first record and
 * how long it took.
 */

export interface TraceSpan {
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

export interface Trace {
  traceId: string;
  /** The first record's start, ISO. */
  startTime: string;
  durationMs: number;
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

/** One trace's records as a waterfall, in the order they started; undefined when none is kept. */
export function traceOf(records: readonly LiveRecord[], traceId: string): Trace | undefined {
  const mine = records
    .filter((r) => traceIdOf(r.record) === traceId)
    .map((r) => ({ r, ...timesOf(r) }))
    .filter((x) => Number.isFinite(x.start))
    .sort((a, b) => a.start - b.start || a.r.seq - b.r.seq);
  const first = mine[0];
  if (first === undefined) return undefined;
  const last = Math.max(...mine.map((x) => x.end));
  const ids = (rec: CallRecord): Record<string, unknown> =>
    (rec['ids'] ?? {}) as Record<string, unknown>;
  return {
    traceId,
    startTime: new Date(first.start).toISOString(),
    durationMs: round(last - first.start),
    spans: mine.map(({ r, start, end }) => ({
      seq: r.seq,
      service: r.service,
      entry: app(r.record, 'entryName'),
      entryType: app(r.record, 'entryType'),
      operation: text(r.record, 'operation'),
      resCode: text(r.record, 'resCode'),
      status: r.status,
      spanId: String(ids(r.record)['spanId'] ?? ''),
      requestId: String(ids(r.record)['requestId'] ?? ''),
      offsetMs: round(start - first.start),
      durationMs: round(end - start),
    })),
  };
}

/** The traces of the records kept, newest first (at most `limit`). */
export function recentTraces(records: readonly LiveRecord[], limit = 50): TraceSummary[] {
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
    const trace = traceOf(list, traceId);
    const root = trace?.spans[0];
    if (trace === undefined || root === undefined) continue;
    out.push({
      traceId,
      operation: root.operation,
      service: root.service,
      startTime: trace.startTime,
      durationMs: trace.durationMs,
      services: [...new Set(trace.spans.map((s) => s.service))],
      spans: trace.spans.length,
      errors: trace.spans.filter((s) => s.status === 'error').length,
    });
  }
  return out.sort((a, b) => b.startTime.localeCompare(a.startTime)).slice(0, limit);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
