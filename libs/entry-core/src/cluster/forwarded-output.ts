/**
 * A worker's write target when `app.workers` > 1 and the worker cannot write it itself so that
 * records stay whole (event/outputs.ts, workerOutput: a terminal, a socket, a file that rotates,
 * a record over PIPE_BUF for a pipe): records go to the primary, which writes them. Terminals
 * promise nothing about concurrent writes, a rotation must be done by one process, and a pipe
 * makes a write atomic only up to PIPE_BUF (4 KiB). The primary's output (entry-core's batched
 * output) then orders, batches and throttles them as it does in a single process.
 */
import fs from 'node:fs';
import type { Output } from '../event/output.js';
import { sendToPrimary } from './worker.js';

/** Pending characters past which a batch is sent at once instead of at the end of the window. */
const BATCH_CHARS = 64 * 1024;
/**
 * How long records gather before they are sent: fewer, bigger messages, so the primary spends
 * little per record (one message and one write per window instead of per event-loop turn).
 */
export const FORWARD_WINDOW_MS = 5;
/** Characters queued or sent but not yet taken by the channel, past which records are dropped and counted. */
const MAX_PENDING_CHARS = 64 * 1024 * 1024;
/** flush() stops waiting after this long. */
const FLUSH_LIMIT_MS = 5000;

const live = new Set<ForwardedOutput>();
let exitHooked = false;

/**
 * Queues records and sends them as one message per FORWARD_WINDOW_MS (or per 64 KiB), a list
 * of whole records. Without a channel (the primary is gone), and
 * at process exit for what is still queued, records are written to the target directly and
 * synchronously, best effort.
 */
export class ForwardedOutput implements Output {
  private pending: string[] = [];
  private pendingChars = 0;
  private unsentChars = 0;
  private window: NodeJS.Timeout | undefined;
  private sent = 0;
  private taken = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  private droppedRecords = 0;
  private closed = false;

  constructor(private readonly outputPath: string) {
    if (!exitHooked) process.on('exit', writeAllAtExit);
    exitHooked = true;
    live.add(this);
  }

  write(chunk: string): void {
    if (this.closed) return;
    if (this.pendingChars + this.unsentChars >= MAX_PENDING_CHARS) {
      this.droppedRecords++;
      return;
    }
    if (this.droppedRecords !== 0) {
      const n = this.droppedRecords;
      this.droppedRecords = 0;
      this.write(
        `svcboot: ${n} records dropped: ${this.outputPath} was not accepting writes fast enough\n`,
      );
    }
    this.pending.push(chunk);
    if ((this.pendingChars += chunk.length) >= BATCH_CHARS) this.send();
    else this.window ??= setTimeout(this.send, FORWARD_WINDOW_MS);
  }

  /** Resolves once every record so far was taken by the channel (or written directly), or after FLUSH_LIMIT_MS. */
  flush(): Promise<void> {
    this.send();
    const target = this.sent;
    if (this.taken >= target) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, FLUSH_LIMIT_MS);
      timer.unref();
      this.waiters.push({
        target,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    live.delete(this);
  }

  private readonly send = (): void => {
    if (this.window) {
      clearTimeout(this.window);
      this.window = undefined;
    }
    if (this.pending.length === 0) return;
    const records = this.pending;
    const chars = this.pendingChars;
    this.pending = [];
    this.pendingChars = 0;
    this.unsentChars += chars;
    this.sent++;
    const ok = sendToPrimary({ svcboot: 'records', path: this.outputPath, records }, (err) => {
      if (err) this.writeDirectly(records);
      this.unsentChars -= chars;
      this.taken++;
      this.settle();
    });
    if (!ok) {
      this.writeDirectly(records);
      this.unsentChars -= chars;
      this.taken++;
      this.settle();
    }
  };

  private settle(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.taken >= w.target) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Writes records to the target itself, synchronously: only when the primary cannot. */
  writeDirectly(records: readonly string[]): void {
    if (records.length === 0) return;
    const text = records.join('');
    try {
      if (this.outputPath === 'stdout') fs.writeSync(1, text);
      else if (this.outputPath === 'stderr') fs.writeSync(2, text);
      else fs.appendFileSync(this.outputPath, text);
    } catch {
      // Best effort: the process is going, or the target is.
    }
  }

  /** At exit: what is still queued is written directly. */
  drainAtExit(): void {
    const records = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    this.writeDirectly(records);
  }
}

function writeAllAtExit(): void {
  for (const o of live) o.drainAtExit();
}
