/**
 * The messages between svcboot's primary process and its workers (`app.workers` > 1), over
 * node:cluster's IPC channel with `advanced` serialization (NaN in metric values survives).
 * Every message has an `svcboot` field, so the app's own cluster messages pass untouched.
 */
import type { Cluster } from 'node:cluster';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** Set by the primary in each worker's environment: its slot, 1 to N (a restarted worker keeps it). */
export const WORKER_ENV = 'SVCBOOT_WORKER';

/**
 * node:cluster, loaded on the first call: loading it (with the child_process and dgram it needs)
 * costs a start ~1.7 ms, and a process with one worker never uses it. (What the call returns is
 * the module's `module.exports`, the object its types call the default export.)
 */
export function clusterModule(): Cluster {
  return process.getBuiltinModule('node:cluster') as unknown as Cluster;
}

/** True in a process an svcboot primary forked (not in an app's own cluster workers). */
export const inSvcbootWorker = process.env[WORKER_ENV] !== undefined && clusterModule().isWorker;

export type MetricsPart = MetricObjectWithValues<MetricValue<string>>[];

/** Worker → primary. */
export type ToPrimary =
  /** Whether this worker has bootstrapped and not begun to stop. */
  | { svcboot: 'state'; ready: boolean }
  /** Whole records for an output path, in order; the primary writes them. */
  | { svcboot: 'records'; path: string; records: string[] }
  /** Asks for every worker's registry `key` (a /metrics scrape); answered by `metrics-parts`. */
  | { svcboot: 'metrics'; id: number; key: string }
  /** This worker's registry `key`, for the primary's collection `id`. */
  | { svcboot: 'metrics-part'; id: number; part: MetricsPart }
  /** The result of the reload the primary asked for (`reload`): its outcome and log line. */
  | { svcboot: 'reloaded'; outcome: string; message: string };

/** Primary → worker. */
export type ToWorker =
  /** Whether every worker is ready: the app's readiness in every worker. */
  | { svcboot: 'all-ready'; ready: boolean }
  /** Shut down as after `signal`; `drainDelayMs` given, that delay instead of the app's. */
  | { svcboot: 'shutdown'; signal: NodeJS.Signals; drainDelayMs?: number }
  /** Send registry `key` as `metrics-part` for collection `id`. */
  | { svcboot: 'collect'; id: number; key: string }
  /** The answer to this worker's `metrics` request `id`: one part per worker that answered. */
  | { svcboot: 'metrics-parts'; id: number; parts: MetricsPart[] }
  /** Reload boot.yaml (the primary got SIGHUP); answered by `reloaded`. */
  | { svcboot: 'reload' };

export function isSvcbootMessage(m: unknown): m is { svcboot: string } {
  return (
    typeof m === 'object' && m !== null && typeof (m as { svcboot?: unknown }).svcboot === 'string'
  );
}
