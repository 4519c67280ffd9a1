import type { CallRecord } from '../records.js';
import type { DevService } from '../services.js';
import { clientPort, entryPort } from './addresses.js';
import { type BootEntry, bootEntries } from './catalog.js';
import type { LiveRecord } from './server.js';

/*
 * The service graph: each service (is it running, its calls, errors and latency from its records)
 * and an edge for each of its client entries (grpcclient, httpclient) to the service it calls,
 * with that entry's calls, errors and calls in the last minute from the client's own records.
 * Who a client calls: the system file's `calls` (`front: { calls: { users: users } }`), else
 * the service whose server entry listens on the port the client's target names, else the target
 * itself (outside svc dev).
 */

export interface GraphNode {
  name: string;
  /** The pid of its running process; undefined while it does not run. */
  pid: number | undefined;
  /** Calls it took (records of its server entries), errors among them, calls in the last minute. */
  calls: number;
  errors: number;
  perMinute: number;
  /** Median and 95th percentile of their durations, ms (undefined without calls). */
  p50Ms: number | undefined;
  p95Ms: number | undefined;
}

export interface GraphEdge {
  from: string;
  /** A service of svc dev, or the client's target when it is none of them. */
  to: string;
  /** Whether `to` is a service of svc dev. */
  internal: boolean;
  /** The caller's client entry and its kind. */
  client: string;
  kind: string;
  calls: number;
  errors: number;
  perMinute: number;
}

export interface ServiceGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

const CLIENT_KINDS = new Set(['grpcclient', 'httpclient']);
const SERVER_KINDS = new Set(['grpc', 'httpserver']);

/** A record of an API call (one with a request id), not a Bootstrap or Reload. */
function isCall(record: CallRecord): boolean {
  const ids = record['ids'];
  return ids !== null && typeof ids === 'object' && 'requestId' in ids;
}

function appOf(record: CallRecord): { entryName: string; entryType: string } {
  const a = (record['app'] ?? {}) as Record<string, unknown>;
  return { entryName: String(a['entryName'] ?? ''), entryType: String(a['entryType'] ?? '') };
}

function isClientRecord(record: CallRecord): boolean {
  return appOf(record).entryType.endsWith('ClientEntry');
}

export function serviceGraph(options: {
  services: readonly DevService[];
  records: readonly LiveRecord[];
  pids: Record<string, number | undefined>;
  env: NodeJS.ProcessEnv;
  now?: number;
}): ServiceGraph {
  const { services, records, env } = options;
  const now = options.now ?? Date.now();
  const entriesOf = new Map<string, BootEntry[]>();
  for (const s of services) {
    try {
      entriesOf.set(s.name, bootEntries(s.configFile));
    } catch {
      entriesOf.set(s.name, []);
    }
  }
  const byPort = new Map<number, string>();
  for (const s of services)
    for (const e of entriesOf.get(s.name) ?? []) {
      if (!SERVER_KINDS.has(e.kind)) continue;
      const port = entryPort(e.options, env);
      if (port !== undefined) byPort.set(port, s.name);
    }
  const calls = records.filter((r) => isCall(r.record));
  const recent = (r: LiveRecord): boolean =>
    now - Date.parse(String(r.record['endTime'] ?? '')) <= 60_000;

  const nodes = services.map((s): GraphNode => {
    const taken = calls.filter((r) => r.service === s.name && !isClientRecord(r.record));
    const ms = taken
      .map((r) => Number(r.record['elapsedNano']) / 1e6)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    return {
      name: s.name,
      pid: options.pids[s.name],
      calls: taken.length,
      errors: taken.filter((r) => r.status === 'error').length,
      perMinute: taken.filter(recent).length,
      p50Ms: quantile(ms, 0.5),
      p95Ms: quantile(ms, 0.95),
    };
  });

  const edges: GraphEdge[] = [];
  for (const s of services)
    for (const e of entriesOf.get(s.name) ?? []) {
      if (!CLIENT_KINDS.has(e.kind)) continue;
      const named = s.calls.find((c) => c.client === e.name)?.service;
      const port = clientPort(e.options, env);
      const to = named ?? (port === undefined ? undefined : byPort.get(port));
      const made = calls.filter(
        (r) =>
          r.service === s.name && isClientRecord(r.record) && appOf(r.record).entryName === e.name,
      );
      edges.push({
        from: s.name,
        to: to ?? String(e.options['target'] ?? e.options['baseUrl'] ?? e.name),
        internal: to !== undefined,
        client: e.name,
        kind: e.kind,
        calls: made.length,
        errors: made.filter((r) => r.status === 'error').length,
        perMinute: made.filter(recent).length,
      });
    }
  return { nodes, edges };
}

function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const v = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return Math.round(v * 100) / 100;
}
