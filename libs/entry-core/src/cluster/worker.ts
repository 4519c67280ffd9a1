/**
 * The worker side of `app.workers` > 1: tells the primary when this worker is ready or stopping,
 * takes its shutdown requests, answers its metric collections, and asks it for every worker's
 * metrics on a scrape. Loaded in every process; it does something only in an svcboot worker.
 */
import type { Registry } from 'prom-client';
import { setAllWorkersReady } from './readiness.js';
import {
  inSvcbootWorker,
  isSvcbootMessage,
  type MetricsPart,
  type ToPrimary,
  type ToWorker,
} from './protocol.js';

/** How long a scrape waits for the primary to gather every worker's metrics. */
export const METRICS_ASK_LIMIT_MS = 5000;

type ShutdownHandler = (signal: NodeJS.Signals, drainDelayMs: number | undefined) => void;

const registries = new Map<string, Registry>();
const asked = new Map<
  number,
  { resolve: (parts: MetricsPart[]) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }
>();
let nextAsk = 0;
let shutdownHandler: ShutdownHandler | undefined;
let shutdownRequested: { signal: NodeJS.Signals; drainDelayMs: number | undefined } | undefined;
let listening = false;
type ReloadHandler = () => Promise<{ outcome: string; message: string }>;
let reloadHandler: ReloadHandler | undefined;

/** Sends to the primary; false when there is no channel any more (the primary is gone). */
export function sendToPrimary(message: ToPrimary, done?: (err: Error | null) => void): boolean {
  if (!process.send || !process.connected) return false;
  process.send(message, undefined, undefined, done ?? ignoreError);
  return true;
}

function ignoreError(): void {}

/** Starts listening to the primary (idempotent); a no-op outside an svcboot worker. */
export function attachWorker(): void {
  if (!inSvcbootWorker || listening) return;
  listening = true;
  process.on('message', onMessage);
  // The primary learns that this worker listens (a shutdown that began meanwhile is sent now).
  sendToPrimary({ svcboot: 'state', ready: false });
}

/** Tells the primary whether this worker's app is ready. */
export function reportWorkerReady(ready: boolean): void {
  if (inSvcbootWorker) sendToPrimary({ svcboot: 'state', ready });
}

/**
 * Runs `handler` when the primary asks this worker to shut down (at once if it already has).
 * Returns a function that removes it.
 */
export function onPrimaryShutdown(handler: ShutdownHandler): () => void {
  shutdownHandler = handler;
  if (shutdownRequested) handler(shutdownRequested.signal, shutdownRequested.drainDelayMs);
  return () => {
    if (shutdownHandler === handler) shutdownHandler = undefined;
  };
}

/**
 * Runs `handler` (the app's reload) when the primary relays a reload (it got SIGHUP), and sends
 * its result back. Returns a function that removes it.
 */
export function onPrimaryReload(handler: ReloadHandler): () => void {
  reloadHandler = handler;
  return () => {
    if (reloadHandler === handler) reloadHandler = undefined;
  };
}

/** Makes `registry` (an entry's, named by `key`) answer the primary's collections. */
export function shareRegistry(key: string, registry: Registry): void {
  registries.set(key, registry);
}

/** Every worker's registry `key` (this one's included), gathered by the primary. */
export function askWorkersMetrics(key: string): Promise<MetricsPart[]> {
  return new Promise((resolve, reject) => {
    const id = nextAsk++;
    const timer = setTimeout(() => {
      asked.delete(id);
      reject(new Error(`the primary did not answer within ${METRICS_ASK_LIMIT_MS} ms`));
    }, METRICS_ASK_LIMIT_MS);
    timer.unref();
    asked.set(id, { resolve, reject, timer });
    if (!sendToPrimary({ svcboot: 'metrics', id, key })) {
      clearTimeout(timer);
      asked.delete(id);
      reject(new Error('the primary process is gone'));
    }
  });
}

function onMessage(raw: unknown): void {
  if (!isSvcbootMessage(raw)) return;
  const message = raw as ToWorker;
  switch (message.svcboot) {
    case 'all-ready':
      setAllWorkersReady(message.ready);
      return;
    case 'shutdown':
      shutdownRequested ??= { signal: message.signal, drainDelayMs: message.drainDelayMs };
      shutdownHandler?.(message.signal, message.drainDelayMs);
      return;
    case 'reload': {
      const handler = reloadHandler;
      if (handler === undefined) {
        sendToPrimary({
          svcboot: 'reloaded',
          outcome: 'refused',
          message: 'reload refused: this worker is not running (not waiting for a signal)',
        });
        return;
      }
      void handler().then(({ outcome, message }) =>
        sendToPrimary({ svcboot: 'reloaded', outcome, message }),
      );
      return;
    }
    case 'collect': {
      const registry = registries.get(message.key);
      void (registry ? registry.getMetricsAsJSON() : Promise.resolve([])).then(
        (part) => sendToPrimary({ svcboot: 'metrics-part', id: message.id, part }),
        () => sendToPrimary({ svcboot: 'metrics-part', id: message.id, part: [] }),
      );
      return;
    }
    case 'metrics-parts': {
      const ask = asked.get(message.id);
      if (!ask) return;
      asked.delete(message.id);
      clearTimeout(ask.timer);
      ask.resolve(message.parts);
      return;
    }
  }
}
