/**
 * The primary process of `app.workers` > 1: forks the workers (node:cluster, so they share the
 * entries' ports), runs no entry itself, writes the records its workers cannot write whole
 * themselves (event/outputs.ts, workerOutput), answers their
 * metric scrapes with every worker's figures, tells them whether all are ready, restarts a
 * worker that exits with an exponential backoff, gives up when workers keep failing at startup,
 * and on SIGTERM/SIGINT has each worker shut down as it would alone, then exits.
 */
import type { Worker } from 'node:cluster';
import os from 'node:os';
import type { Logger } from 'pino';
import { coreError } from '../errors.js';
import { OutputSet } from '../event/outputs.js';
import { createAppLogger } from '../logger.js';
import {
  clusterModule,
  WORKER_ENV,
  isSvcbootMessage,
  type MetricsPart,
  type ToPrimary,
  type ToWorker,
} from './protocol.js';

/** First wait before restarting a worker that exited; doubles per exit in a row, up to RESTART_MAX_MS. */
export const RESTART_FIRST_MS = 100;
export const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before it exited starts the backoff over. */
export const RESTART_RESET_AFTER_MS = 60_000;
/** Workers exiting before they were ready this many times in a row: the primary gives up. */
export const STARTUP_CRASH_LIMIT = 5;
/** After the drain delay, how long the primary waits for its workers to stop before it kills them. */
export const WORKER_STOP_LIMIT_MS = 60_000;
/** How long the primary waits for a worker's metrics before answering without them. */
const COLLECT_LIMIT_MS = 3000;

export interface PrimaryOptions {
  workers: number;
  logger: Logger;
  outputs: OutputSet;
  /** `app.drainDelayMs` (or BootOptions.drainDelayMs): bounds how long the workers may take to stop. */
  drainDelayMs: number | undefined;
  /** The drain delay a worker uses after SIGTERM when none is configured. */
  defaultSigtermDrainMs: number;
  /** `app.reload.signal`: SIGHUP asks every worker to reload (default true). */
  reloadOnSignal?: boolean;
}

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  ready: boolean;
  forkedAt: number;
  exitsInARow: number;
  restartTimer: NodeJS.Timeout | undefined;
}

interface Collection {
  parts: MetricsPart[];
  waiting: Set<number>;
  timer: NodeJS.Timeout;
  done: () => void;
}

/** Supervises the workers until they have all stopped; resolves the process's exit code. */
export function superviseWorkers(options: PrimaryOptions): Promise<number> {
  return new Supervisor(options).run();
}

class Supervisor {
  private readonly slots: Slot[];
  private readonly logger: Logger;
  private readonly gone = new Map<Worker, { exited: boolean; disconnected: boolean }>();
  private readonly collections = new Map<number, Collection>();
  private nextCollection = 0;
  /** Workers that have said anything (their listener is on), and those that were ready once. */
  private readonly attached = new WeakSet<Worker>();
  private readonly readyOnce = new WeakSet<Worker>();
  /** The shutdown request, once stopping: sent to each worker that is listening, and to later ones when they are. */
  private shutdownMessage: ToWorker | undefined;
  private startupExits = 0;
  private allReady = false;
  private stopping = false;
  private clean = true;
  private killTimer: NodeJS.Timeout | undefined;
  private finish: ((code: number) => void) | undefined;

  constructor(private readonly options: PrimaryOptions) {
    this.logger = options.logger;
    this.slots = Array.from({ length: options.workers }, (_, i) => ({
      index: i + 1,
      worker: undefined,
      ready: false,
      forkedAt: 0,
      exitsInARow: 0,
      restartTimer: undefined,
    }));
  }

  run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.finish = resolve));
    // Structured clone: strings are not re-escaped as JSON, and NaN survives in metric values.
    const cluster = clusterModule();
    cluster.setupPrimary({ serialization: 'advanced' });
    cluster.on('message', (worker, message: unknown) => {
      if (isSvcbootMessage(message)) this.onMessage(worker, message as ToPrimary);
    });
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (signalled) {
        this.logger.error(`Received ${signal} again during shutdown; killing the workers now`);
        for (const s of this.slots) s.worker?.process.kill('SIGKILL');
        process.exit(1);
      }
      signalled = true;
      this.stop(signal, signal, undefined);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // SIGHUP: every worker reloads boot.yaml and says how it went (README, "Reload").
    if (this.options.reloadOnSignal !== false) process.on('SIGHUP', () => this.relayReload());
    this.logger.info(`Starting ${this.slots.length} workers (app.workers), pid ${process.pid}`);
    for (const slot of this.slots) this.fork(slot);
    return done;
  }

  private fork(slot: Slot): void {
    slot.restartTimer = undefined;
    if (this.stopping) return;
    const worker = clusterModule().fork({ [WORKER_ENV]: String(slot.index) });
    slot.worker = worker;
    slot.ready = false;
    slot.forkedAt = Date.now();
    const state = { exited: false, disconnected: false };
    this.gone.set(worker, state);
    let exit: { code: number | null; signal: string | null } = { code: null, signal: null };
    const settle = (): void => {
      if (!state.exited || !state.disconnected) return;
      this.gone.delete(worker);
      this.onGone(slot, worker, exit.code, exit.signal);
    };
    worker.on('exit', (code: number | null, signal: string | null) => {
      exit = { code, signal };
      state.exited = true;
      // A worker that exits before its channel closes still settles: 'disconnect' follows the exit.
      settle();
    });
    worker.on('disconnect', () => {
      state.disconnected = true;
      settle();
    });
    worker.on('error', () => undefined);
  }

  private onMessage(worker: Worker, message: ToPrimary): void {
    switch (message.svcboot) {
      case 'records': {
        const out = this.options.outputs.get(message.path);
        for (const r of message.records) out.write(r);
        return;
      }
      case 'state': {
        const slot = this.slots.find((s) => s.worker === worker);
        if (!slot) return;
        if (!this.attached.has(worker)) {
          this.attached.add(worker);
          // It was still starting when the shutdown began: it hears of it now.
          if (this.shutdownMessage) send(worker, this.shutdownMessage);
        }
        slot.ready = message.ready;
        if (message.ready) {
          this.readyOnce.add(worker);
          this.startupExits = 0;
          this.logger.info(`Worker ${slot.index} (pid ${worker.process.pid}) is ready`);
        }
        this.updateReadiness();
        // A worker that became ready learns the current answer even when it did not change.
        if (message.ready) send(worker, { svcboot: 'all-ready', ready: this.allReady });
        return;
      }
      case 'metrics':
        this.collect(worker, message.id, message.key);
        return;
      case 'reloaded': {
        const slot = this.slots.find((s) => s.worker === worker);
        const line = `Worker ${slot?.index ?? '?'} (pid ${worker.process.pid}) reload ${message.outcome}: ${message.message}`;
        if (message.outcome === 'applied' || message.outcome === 'unchanged')
          this.logger.info(line);
        else this.logger.error(line);
        return;
      }
      case 'metrics-part': {
        const c = this.collections.get(message.id);
        if (!c || !worker.id || !c.waiting.delete(worker.id)) return;
        c.parts.push(message.part);
        if (c.waiting.size === 0) c.done();
        return;
      }
    }
  }

  /** Asks every worker that listens to reload boot.yaml; each one's result is logged when it comes. */
  private relayReload(): void {
    if (this.stopping) return;
    const workers = this.slots.filter(
      (s) => s.worker?.isConnected() === true && this.attached.has(s.worker),
    );
    this.logger.info(
      `Received SIGHUP; asking ${workers.length} workers to reload the configuration`,
    );
    for (const s of workers) send(s.worker!, { svcboot: 'reload' });
  }

  /** Gathers registry `key` from every connected worker for `asker`'s scrape `askId`. */
  private collect(asker: Worker, askId: number, key: string): void {
    const id = this.nextCollection++;
    const workers = this.slots
      .map((s) => s.worker)
      // A worker still starting has no listener yet: asking it would only wait for the time limit.
      .filter((w): w is Worker => w?.isConnected() === true && this.attached.has(w));
    const c: Collection = {
      parts: [],
      waiting: new Set(workers.map((w) => w.id)),
      timer: setTimeout(() => c.done(), COLLECT_LIMIT_MS),
      done: () => {
        clearTimeout(c.timer);
        this.collections.delete(id);
        if (c.waiting.size > 0)
          this.logger.warn(
            `Metrics of ${c.waiting.size} worker(s) did not come within ${COLLECT_LIMIT_MS} ms; /metrics answered without them`,
          );
        send(asker, { svcboot: 'metrics-parts', id: askId, parts: c.parts });
      },
    };
    this.collections.set(id, c);
    for (const w of workers) send(w, { svcboot: 'collect', id, key });
    if (workers.length === 0) c.done();
  }

  private updateReadiness(): void {
    const ready = !this.stopping && this.slots.every((s) => s.worker !== undefined && s.ready);
    if (ready === this.allReady) return;
    this.allReady = ready;
    if (ready) this.logger.info(`All ${this.slots.length} workers are ready`);
    for (const s of this.slots) if (s.worker) send(s.worker, { svcboot: 'all-ready', ready });
  }

  private onGone(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker === worker) {
      slot.worker = undefined;
      slot.ready = false;
    }
    // A collection still waiting for this worker goes on without it.
    for (const c of this.collections.values())
      if (c.waiting.delete(worker.id) && c.waiting.size === 0) c.done();
    const how = signal ? `signal ${signal}` : `code ${code}`;
    const pid = worker.process.pid;
    if (this.stopping) {
      if (code !== 0) this.clean = false;
      this.logger.info(`Worker ${slot.index} (pid ${pid}) stopped (${how})`);
      this.finishIfAllGone();
      return;
    }
    this.updateReadiness();
    if (!this.readyOnce.has(worker)) {
      this.startupExits++;
      if (this.startupExits >= STARTUP_CRASH_LIMIT) {
        this.logger.error(
          coreError('SVC_WORKERS_CRASH_LOOP', [
            this.startupExits,
            `worker ${slot.index}, pid ${pid}, ${how}`,
          ]).message,
        );
        this.clean = false;
        this.stop('crash loop', 'SIGTERM', 0);
        return;
      }
    }
    if (Date.now() - slot.forkedAt >= RESTART_RESET_AFTER_MS) slot.exitsInARow = 0;
    const delay = Math.min(RESTART_FIRST_MS * 2 ** slot.exitsInARow, RESTART_MAX_MS);
    slot.exitsInARow++;
    this.logger.error(
      `Worker ${slot.index} (pid ${pid}) exited (${how}); restarting it in ${delay} ms (exit ${slot.exitsInARow} in a row)`,
    );
    slot.restartTimer = setTimeout(() => this.fork(slot), delay);
  }

  /**
   * Readiness false in every worker at once, then each worker is asked to shut down as after
   * `signal` (its own drain delay, or `drainDelayMs` when given); the primary exits once all
   * have stopped: 0 when each stopped cleanly.
   */
  private stop(reason: string, signal: NodeJS.Signals, drainDelayMs: number | undefined): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const s of this.slots) {
      clearTimeout(s.restartTimer);
      s.restartTimer = undefined;
    }
    this.updateReadiness();
    const live = this.slots.filter((s) => s.worker !== undefined);
    this.logger.info(`Shutdown begins (${reason}): stopping ${live.length} workers`);
    const message: ToWorker =
      drainDelayMs === undefined
        ? { svcboot: 'shutdown', signal }
        : { svcboot: 'shutdown', signal, drainDelayMs };
    this.shutdownMessage = message;
    // A worker not listening yet is told when it first reports (see 'state').
    for (const s of live) if (this.attached.has(s.worker!)) send(s.worker!, message);
    const limit =
      (drainDelayMs ?? this.options.drainDelayMs ?? this.options.defaultSigtermDrainMs) +
      WORKER_STOP_LIMIT_MS;
    this.killTimer = setTimeout(() => {
      this.clean = false;
      for (const s of this.slots) {
        if (!s.worker) continue;
        this.logger.error(
          `Worker ${s.index} (pid ${s.worker.process.pid}) did not stop within ${limit} ms; killing it`,
        );
        s.worker.process.kill('SIGKILL');
      }
    }, limit);
    this.finishIfAllGone();
  }

  private finishIfAllGone(): void {
    if (!this.stopping || this.gone.size > 0 || !this.finish) return;
    const finish = this.finish;
    this.finish = undefined;
    clearTimeout(this.killTimer);
    this.logger.info(this.clean ? 'Shutdown complete' : 'Shutdown complete, with errors');
    void this.options.outputs.close().then(() => finish(this.clean ? 0 : 1));
  }
}

function send(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}

/** The number of workers `app.workers` asks for: `auto` is one per CPU the process may use. */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? os.availableParallelism() : setting;
}

/**
 * What `boot()` does in the primary process when `app.workers` > 1: supervises the workers,
 * then exits the process with the code (it never returns to the app's main, which only the
 * workers run).
 */
export async function runPrimary(
  options: Omit<PrimaryOptions, 'logger' | 'outputs'>,
): Promise<never> {
  const outputs = new OutputSet();
  const logger = createAppLogger({
    level: 'info',
    encoding: 'console',
    outputs: [outputs.get('stdout')],
  }).child({ entryName: 'workers' });
  // Signal listeners do not hold the event loop open, nor does a retry on a full stdout pipe.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const code = await superviseWorkers({ ...options, logger, outputs });
  clearInterval(keepAlive);
  process.exit(code);
}
