import fs from 'node:fs';
import path from 'node:path';
import { FORWARD_WINDOW_MS, ForwardedOutput } from '../cluster/forwarded-output.js';
import { inSvcbootWorker } from '../cluster/protocol.js';
import { Rotation, type RotationOptions } from './rotation.js';

import type { Output } from './output.js';

export type { Output };

/**
 * The most bytes one write to a pipe may carry and stay whole when other processes write to the
 * same pipe (POSIX PIPE_BUF, 4 KiB on Linux): a worker of `app.workers` > 1 writing to a pipe
 * writes batches of whole records up to this size.
 */
export const PIPE_BUF = 4096;
/** Pending characters past which a batch is written at once instead of at the end of the turn. */
const BATCH_CHARS = 64 * 1024;
/** The most characters joined into one write (a string cannot grow without bound). */
const MAX_WRITE_CHARS = 1024 * 1024;
/**
 * Pending characters per output past which records are dropped (and counted) instead of queued,
 * so that a target nobody reads cannot make the process run out of memory.
 */
const MAX_PENDING_CHARS = 64 * 1024 * 1024;
/** First wait before writing again to a pipe or terminal that answered EAGAIN; doubles up to BUSY_RETRY_MAX_MS. */
const BUSY_RETRY_FIRST_MS = 1;
const BUSY_RETRY_MAX_MS = 100;
/** At process exit, give up on a pipe that keeps answering EAGAIN after this long. */
const EXIT_BUSY_LIMIT_MS = 1000;
/**
 * A write the event loop has seen still on the thread pool this long after it started is stuck:
 * at process exit its output is skipped. "Seen by the loop" matters: see {@link BatchedOutput.watch}.
 */
const EXIT_STUCK_MS = 1000;
/** At process exit, how long to wait for a batch still on the thread pool to reach a regular file before writing what follows it. */
const EXIT_LAND_LIMIT_MS = 5000;
/** flush() and close() stop waiting for a stuck target after this long. */
const FLUSH_LIMIT_MS = 5000;

/**
 * How long records gather before a write to a file named by its path (not stdout or stderr): one
 * write per window instead of one per event-loop turn. A write costs the event loop about as much
 * as a small call (a thread-pool round trip: ~13-22 µs of CPU on the bench machine, against a
 * call's ~100 and ~0.25 µs a record in a batch), and with calls one after the other every turn
 * holds one record. 50 ms rather than 5: a service whose calls come more than 5 ms apart (under
 * 200 a second, most services most of the time) wrote each record on its own; the bound is still
 * well under what a reader of the file notices, and shutdown, flush() and the exit hook write
 * what is queued at once. Standard output keeps the end-of-turn write: there records share the
 * target with the app's own console output.
 */
export const FILE_WINDOW_MS = 50;
const FILE_WINDOW = { windowMs: FILE_WINDOW_MS } as const;

function isStdio(outputPath: string): boolean {
  return outputPath === 'stdout' || outputPath === 'stderr';
}

const dropped: Output = { write: () => undefined };
function noop(): void {}

/**
 * The app's write targets by output path (`stdout`, `stderr` or a file), shared so that
 * two loggers writing to one place never interleave inside a record.
 *
 * A write only queues the record; the records of one event-loop turn (of a FILE_WINDOW_MS window
 * for a file) go out as one write at its end (or sooner once 64 KiB are pending). See
 * {@link BatchedOutput}.
 */
export class OutputSet {
  private readonly outputs = new Map<string, BatchedOutput | ForwardedOutput>();
  private closed = false;

  /** Outputs replaced in a worker by a forwarded one (a file asked for later with rotation): still flushed and closed. */
  private readonly retired: BatchedOutput[] = [];

  /**
   * The output for `outputPath`; `rotation` (a `logger`/`event` entry's `lumberjack`) rotates a
   * file once it grows past its size: the first entry to ask for a file with one sets it. In a
   * worker of `app.workers` > 1, see {@link workerOutput}: the worker writes whole records itself
   * where the target keeps them whole, and the primary writes the rest (a file that rotates).
   */
  get(outputPath: string, rotation?: RotationOptions): Output {
    if (this.closed) return dropped;
    let output = this.outputs.get(outputPath);
    if (!output) {
      output = inSvcbootWorker
        ? workerOutput(outputPath, rotation)
        : new BatchedOutput(outputPath, isStdio(outputPath) ? undefined : FILE_WINDOW);
      this.outputs.set(outputPath, output);
    } else if (inSvcbootWorker && rotation && output instanceof BatchedOutput) {
      // Asked for with rotation after it was made without: from now on the primary writes it.
      this.retired.push(output);
      output = new ForwardedOutput(outputPath);
      this.outputs.set(outputPath, output);
    }
    if (rotation && output instanceof BatchedOutput) output.rotateWith(rotation);
    return output;
  }

  private all(): Array<BatchedOutput | ForwardedOutput> {
    return [...this.outputs.values(), ...this.retired];
  }

  /** Resolves once every record written so far has been handed to the OS. */
  async flush(): Promise<void> {
    await Promise.all(this.all().map((o) => o.flush()));
  }

  /** Flushes, then closes files (never the process's stdout or stderr); later writes are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.all().map((o) => o.close()));
  }
}

/** What a write target is, for a worker: where its writes stay whole with other processes writing too. */
type TargetKind = 'file' | 'pipe' | 'other';

function targetKind(outputPath: string): TargetKind {
  try {
    const st =
      outputPath === 'stdout'
        ? fs.fstatSync(1)
        : outputPath === 'stderr'
          ? fs.fstatSync(2)
          : fs.statSync(outputPath);
    return st.isFile() ? 'file' : st.isFIFO() ? 'pipe' : 'other';
  } catch (err) {
    // Not there yet: the output creates it, a regular file.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' &&
      outputPath !== 'stdout' &&
      outputPath !== 'stderr'
      ? 'file'
      : 'other';
  }
}

/**
 * A worker's output (`app.workers` > 1; once per path, at boot): the worker writes whole records
 * itself where other processes' writes cannot land inside one, so that the primary does not
 * write every worker's records (issue 33):
 * - a regular file (opened for appending, or a stdout redirected to a file): each write lands
 *   whole (Linux serialises writes to one file), batches of any size;
 * - a pipe (a container's stdout): writes of whole records up to PIPE_BUF bytes, which POSIX
 *   makes atomic; a record bigger than that goes to the primary, which writes it;
 * - anything else (a terminal, a socket), and a file that rotates (one process must rename it):
 *   the primary writes every record (cluster/forwarded-output.ts).
 */
function workerOutput(
  outputPath: string,
  rotation: RotationOptions | undefined,
): BatchedOutput | ForwardedOutput {
  if (rotation) return new ForwardedOutput(outputPath);
  switch (targetKind(outputPath)) {
    case 'file':
      return new BatchedOutput(outputPath, { windowMs: FORWARD_WINDOW_MS });
    case 'pipe':
      return new BatchedOutput(outputPath, {
        windowMs: FORWARD_WINDOW_MS,
        maxWriteBytes: PIPE_BUF,
        oversize: new ForwardedOutput(outputPath),
      });
    default:
      return new ForwardedOutput(outputPath);
  }
}

/**
 * A windowed output (a worker's, or a file's: FILE_WINDOW_MS): its records gather for `windowMs`
 * (as a worker's did when sent to the primary: one write per window, not per event-loop turn);
 * to a worker's pipe, writes of up to `maxWriteBytes`, bigger records to `oversize`.
 */
interface WorkerWrites {
  readonly windowMs: number;
  readonly maxWriteBytes?: number;
  readonly oversize?: Output & { flush(): Promise<void>; close(): Promise<void> };
}

/**
 * One write target. `write` pushes the record onto a list; the first write of an event-loop turn
 * schedules one `setImmediate` (for a file a FILE_WINDOW_MS timer, in a worker of `app.workers` > 1
 * a FORWARD_WINDOW_MS one: WorkerWrites)
 * that joins the list and hands it to `fs.write` as one buffer (sooner when BATCH_CHARS are
 * pending; to a worker's pipe, as several writes of whole records up to PIPE_BUF each). While a write is in flight new records wait for the
 * next batch, so records keep their order and a record is never split between writers. Partial
 * writes continue from where they stopped; EAGAIN from a non-blocking pipe or terminal is
 * retried after 1 ms, doubling up to BUSY_RETRY_MAX_MS (an unref'd timer); EBADF and EPIPE stop
 * the output for good; any other error drops the batch, and the next batch starts on a new line
 * if the dropped one was cut off. Errors are reported once on stderr. Past MAX_PENDING_CHARS
 * queued, records are dropped and counted, and a line saying how many is queued in their place
 * once there is room again. At process exit the records still queued are written synchronously,
 * after the batch still on the thread pool (if any) reached a regular file, and so is every record
 * written after that (an app's own 'exit' listener), unless the event loop saw the output's async
 * write still on the thread pool EXIT_STUCK_MS after it started (see {@link writeAllSync}).
 */
class BatchedOutput implements Output {
  private readonly fdFixed: number | undefined;
  private fd = -1;
  private state: 'opening' | 'open' | 'failed' | 'closed' = 'opening';
  private closed = false;
  private closeFile = false;
  /** True once closed, failed or exiting: write() leaves the fast path. */
  private bypass = false;
  /** Set by the process 'exit' hook: from then on every write is synchronous. */
  private exiting = false;
  /** Resolves when the file's open finished (or failed); undefined for stdout and stderr. */
  private readonly opening: Promise<void> | undefined;
  private openDone: (() => void) | undefined;

  /** Records queued for the next batch, and their length in characters. */
  private pending: string[] = [];
  private pendingChars = 0;
  private turn: NodeJS.Immediate | NodeJS.Timeout | undefined;

  /** The unwritten rest of the batch being written, and how many records it holds. */
  private inFlight: Buffer | undefined;
  private inFlightRecords = 0;
  /** True while fs.write runs on the thread pool (false while waiting to retry after EAGAIN). */
  private writing = false;
  /** When the current fs.write was handed to the thread pool (Date.now()). */
  private writeStartedAt = 0;
  /** Counts fs.write calls, so that the stuck watchdog knows whether the write it watched is still the current one. */
  private writeSeq = 0;
  /** Set when the event loop saw the current write still on the thread pool EXIT_STUCK_MS after it started. */
  private stuckSeen = false;
  /** Fires EXIT_STUCK_MS after a write started (re-armed for each write; unref'd). */
  private watchdog: NodeJS.Timeout | undefined;
  /** True when the target is a regular file: its size tells when a batch in flight has landed. */
  private regularFile = false;
  /** The file's size just before the current fs.write (-1 when unknown). */
  private sizeBeforeWrite = -1;
  /** True while the target's last byte is inside a record (a batch was cut off, or is being continued). */
  private lineOpen = false;
  private busyDelay = BUSY_RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Records dropped since the last notice because MAX_PENDING_CHARS were queued. */
  private droppedRecords = 0;

  /** Records accepted, and records handed to the OS (or dropped after an error). */
  private accepted = 0;
  private done = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  private errorReported = false;

  /** `lumberjack`: set by the first entry that asks for this file with it. */
  private rotation: Rotation | undefined;

  rotateWith(options: RotationOptions): void {
    if (this.rotation || this.fdFixed !== undefined) return;
    this.rotation = new Rotation(this.outputPath, options, (err) => this.report(err, 'write'));
  }

  /** Resolves once the rotation's background work (gzip, removals) started so far is done. */
  rotationSettled(): Promise<void> {
    return this.rotation?.settled() ?? Promise.resolve();
  }

  /** Set for a worker's pipe: see {@link workerOutput}. */
  private readonly maxWriteBytes: number | undefined;
  private readonly oversize: WorkerWrites['oversize'];
  /** Set for a file and in a worker: see {@link WorkerWrites}; else a batch is written at the end of its turn. */
  private readonly windowMs: number | undefined;
  /** The window's timer, re-armed (refresh) for each batch rather than made anew. */
  private windowTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly outputPath: string,
    worker?: WorkerWrites,
  ) {
    this.maxWriteBytes = worker?.maxWriteBytes;
    this.oversize = worker?.oversize;
    this.windowMs = worker?.windowMs;
    this.fdFixed = outputPath === 'stdout' ? 1 : outputPath === 'stderr' ? 2 : undefined;
    if (this.fdFixed !== undefined) {
      this.fd = this.fdFixed;
      this.state = 'open';
      this.regularFile = isRegularFile(this.fd);
    } else {
      this.opening = new Promise((resolve) => (this.openDone = resolve));
      fs.mkdir(path.dirname(outputPath), { recursive: true }, (mkdirErr) => {
        if (mkdirErr) return this.opened(mkdirErr, -1);
        fs.open(outputPath, 'a', (err, fd) => this.opened(err, fd));
      });
    }
    track(this);
    // Made by an app's own 'exit' listener, after the hook ran: every write is synchronous.
    if (processExiting) this.exiting = this.bypass = true;
  }

  write(chunk: string): void {
    const max = this.maxWriteBytes;
    if (max !== undefined && chunk.length * 3 > max && Buffer.byteLength(chunk) > max) {
      // Cannot be one atomic write to the pipe: the primary writes it.
      this.oversize!.write(chunk);
      return;
    }
    if (this.bypass) {
      this.writeBypassed(chunk);
      return;
    }
    if (this.pendingChars >= MAX_PENDING_CHARS) {
      this.droppedRecords++;
      return;
    }
    if (this.droppedRecords !== 0) this.queueDropNotice();
    this.pending.push(chunk);
    this.accepted++;
    if ((this.pendingChars += chunk.length) >= BATCH_CHARS) this.startWrite();
    else
      this.turn ??= this.windowMs === undefined ? setImmediate(this.endOfTurn) : this.armWindow();
  }

  /** Resolves once every record accepted so far has been handed to the OS (or dropped after an error), or after FLUSH_LIMIT_MS. */
  flush(): Promise<void> {
    if (this.oversize) return Promise.all([this.oversize.flush(), this.flushOwn()]).then(noop);
    return this.flushOwn();
  }

  private flushOwn(): Promise<void> {
    const target = this.accepted;
    if (this.done >= target) return Promise.resolve();
    this.startWrite();
    if (this.done >= target) return Promise.resolve(); // settled during startWrite (a write that failed at once)
    return new Promise((resolve) => {
      const waiter = {
        target,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      // Ref'd: an awaited flush holds the process until it settles or its limit passes (unref'd,
      // a process with nothing else pending could end inside the await, its next line unrun).
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      }, FLUSH_LIMIT_MS);
      this.waiters.push(waiter);
    });
  }

  /**
   * Drops later writes, flushes, and closes a file: at once, after its open finished if it was
   * still opening (waiting up to FLUSH_LIMIT_MS), or when a write still in flight after the
   * flush's time limit ends.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.droppedRecords !== 0 && !this.bypass) this.queueDropNotice();
    this.closed = true;
    this.bypass = true;
    await Promise.all([this.flushOwn(), this.oversize?.close()]);
    this.reportUnwritten();
    // The backups' gzip and removals finish before the app says it stopped.
    await withinLimit(this.rotationSettled(), FLUSH_LIMIT_MS);
    untrack(this);
    if (!this.writing) clearTimeout(this.watchdog);
    if (this.fdFixed !== undefined) return;
    if (this.state === 'opening' && this.opening) await withinLimit(this.opening, FLUSH_LIMIT_MS);
    this.closeFile = true;
    if (this.idle()) await this.closeFd();
  }

  /**
   * After close()'s flush gave up (FLUSH_LIMIT_MS): says on stderr how many records a file output
   * still holds, which the process loses if it ends now (what close() is for). Not for stdout and
   * stderr: stuck, they are likely the very stream this would be said on.
   */
  private reportUnwritten(): void {
    const handedOver = this.inFlight === undefined ? 0 : this.inFlightRecords;
    const unwritten = this.accepted - this.done - handedOver;
    if (unwritten <= 0 || this.fdFixed !== undefined || this.state === 'failed') return;
    try {
      fs.writeSync(
        2,
        `svcboot: ${unwritten} log records for ${this.outputPath} were not written ${FLUSH_LIMIT_MS / 1000} s after the app closed it: the file took no writes (a full disk, a stuck network mount, a FIFO nobody reads); they are lost if the process ends now\n`,
      );
    } catch {
      // stderr itself is gone: nowhere left to say it.
    }
  }

  /** write() once closed, failed or exiting: drops the record, or at exit writes it synchronously. */
  private writeBypassed(chunk: string): void {
    if (!this.exiting || this.closed || this.state === 'failed' || this.state === 'closed') return;
    this.pending.push(chunk);
    this.pendingChars += chunk.length;
    this.writeAllSync();
  }

  /** Queues the line saying how many records were dropped, where they would have been. */
  private queueDropNotice(): void {
    const line = `svcboot: ${this.droppedRecords} records dropped: ${this.outputPath} was not accepting writes fast enough\n`;
    this.droppedRecords = 0;
    this.pending.push(line);
    this.pendingChars += line.length;
    this.accepted++;
  }

  /**
   * Arms the stuck watchdog for the write just handed to the thread pool. The write counts as
   * stuck only when the event loop itself saw it unfinished EXIT_STUCK_MS after it started: the
   * timer's check runs in a setImmediate, that is after the poll phase that delivers finished
   * writes. Wall time since the write started is not enough: a write's callback runs only when
   * the main thread polls, so a main thread that is late (a loaded machine, a long synchronous
   * stretch, a timer due in the same loop turn) makes a write finished long ago look stuck.
   */
  private watch(): void {
    this.stuckSeen = false;
    if (this.watchdog) this.watchdog.refresh();
    else {
      this.watchdog = setTimeout(this.watchdogFired, EXIT_STUCK_MS);
      this.watchdog.unref();
    }
  }

  private readonly watchdogFired = (): void => {
    if (!this.writing) return;
    const seq = this.writeSeq;
    if (Date.now() - this.writeStartedAt < EXIT_STUCK_MS) {
      this.watchdog?.refresh(); // re-armed by a later write while this timer was due
      return;
    }
    setImmediate(() => {
      if (this.writing && this.writeSeq === seq) this.stuckSeen = true;
    }).unref();
  };

  /**
   * At exit, before writing after a batch that is still on the thread pool: waits (up to
   * EXIT_LAND_LIMIT_MS) until a regular file's size shows the batch landed, so that what is
   * written synchronously now lands after it. For pipes and terminals there is nothing to watch:
   * what follows is written at once and may land before the batch in flight.
   */
  private waitForInFlight(): void {
    if (!this.regularFile || this.sizeBeforeWrite < 0 || !this.inFlight) return;
    const landed = this.sizeBeforeWrite + this.inFlight.length;
    const deadline = Date.now() + EXIT_LAND_LIMIT_MS;
    try {
      while (fs.fstatSync(this.fd).size < landed && Date.now() < deadline)
        Atomics.wait(sleeper, 0, 0, 1);
    } catch {
      // The file cannot be looked at: write what follows at once.
    }
  }

  /**
   * At process exit (and for each write after it): writes the queued records synchronously. A
   * batch already on the thread pool is left to it (writing it again could duplicate it; libuv
   * finishes the writes on its thread pool before the process ends, on Node 20 and on Node 24),
   * and for a regular file what follows waits until it landed; a batch waiting to retry after
   * EAGAIN is written first. An output whose async write the event loop saw stuck (see
   * {@link watch}) is skipped without a word (writing to it could block the exit forever, and
   * stderr may be the stuck one).
   *
   * Records were lost here before (issue 14: 2,500 of 5,000 on Node 24 under `npm test`): the
   * output was judged stuck by Date.now() - writeStartedAt > EXIT_STUCK_MS alone, and its queued
   * records were discarded. On a loaded machine the child's main thread ran its exit hook more
   * than a second after handing the first half to fs.write, so a write the thread pool had
   * finished long before (its callback not yet run) looked stuck, and the second half was thrown
   * away in silence. The same loss happens on Node 20 when the main thread is as late; nothing in
   * Node 24's exit path drops a thread-pool write (both drain the pool at exit).
   */
  writeAllSync(): void {
    this.exiting = true;
    this.bypass = true;
    if (this.state === 'failed' || this.state === 'closed') return;
    this.clearTurn();
    this.turn = undefined;
    clearTimeout(this.watchdog);
    if (this.writing && this.stuckSeen) {
      this.pending = [];
      this.pendingChars = 0;
      return;
    }
    if (this.droppedRecords !== 0) this.queueDropNotice();
    const parts: Buffer[] = [];
    if (this.inFlight && !this.writing) {
      parts.push(this.inFlight);
      this.inFlight = undefined;
      clearTimeout(this.retryTimer);
    } else if (this.lineOpen && !this.inFlight && this.pending.length) {
      this.pending.unshift('\n');
    }
    if (this.maxWriteBytes !== undefined) {
      // A worker's pipe: whole records, one atomic write each group (see workerOutput).
      for (let rest = this.pending; rest.length > 0; ) {
        const n = this.wholeWriteCount(rest, 0);
        parts.push(Buffer.from(rest.slice(0, n).join(''), 'utf8'));
        rest = rest.slice(n);
      }
    } else if (this.pending.length) parts.push(Buffer.from(this.pending.join(''), 'utf8'));
    this.pending = [];
    this.pendingChars = 0;
    if (parts.length === 0) return;
    if (this.writing) this.waitForInFlight();
    try {
      if (this.fd < 0) {
        // Exiting before the file finished opening: open it now.
        fs.mkdirSync(path.dirname(this.outputPath), { recursive: true });
        this.fd = fs.openSync(this.outputPath, 'a');
      }
      if (this.maxWriteBytes !== undefined) for (const part of parts) writeFullySync(this.fd, part);
      else writeFullySync(this.fd, parts.length === 1 ? parts[0]! : Buffer.concat(parts));
      this.lineOpen = false;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EBADF' || code === 'EPIPE') this.state = 'failed';
      this.report(err, code === 'EBADF' || code === 'EPIPE' ? 'stopped' : 'write');
    }
  }

  /** Starts a window (unref'd: queued records never keep the process alive; the exit hook writes them). */
  private armWindow(): NodeJS.Timeout {
    if (this.windowTimer) return this.windowTimer.refresh();
    this.windowTimer = setTimeout(this.endOfTurn, this.windowMs);
    this.windowTimer.unref();
    return this.windowTimer;
  }

  private clearTurn(): void {
    const turn = this.turn;
    if (turn === undefined) return;
    if (turn === this.windowTimer) {
      clearTimeout(turn);
      // A cleared timer cannot be re-armed by refresh(): a later window makes a new one.
      this.windowTimer = undefined;
    } else clearImmediate(turn as NodeJS.Immediate);
  }

  private readonly endOfTurn = (): void => {
    this.turn = undefined;
    this.startWrite();
  };

  private opened(err: NodeJS.ErrnoException | null, fd: number): void {
    this.openDone?.();
    if (this.state !== 'opening') {
      // Opened synchronously at exit meanwhile (cannot happen after exit; kept for safety).
      if (!err && fd !== this.fd) fs.close(fd, () => undefined);
      return;
    }
    if (err) {
      this.fail(err, 'open');
      return;
    }
    this.fd = fd;
    this.state = 'open';
    this.regularFile = isRegularFile(fd);
    this.startWrite();
    this.closeIfIdle();
  }

  /** Hands the queued records to fs.write as one buffer, unless a write is in flight or the file is not open yet. */
  private startWrite(): void {
    if (this.inFlight !== undefined || this.state !== 'open' || this.pending.length === 0) return;
    let records: string[];
    if (this.maxWriteBytes !== undefined) {
      const n = this.wholeWriteCount(this.pending, this.lineOpen ? 1 : 0);
      records = n === this.pending.length ? this.pending : this.pending.splice(0, n);
      if (records === this.pending) this.pending = [];
      let chars = 0;
      for (const r of records) chars += r.length;
      this.pendingChars -= chars;
    } else if (this.pendingChars <= MAX_WRITE_CHARS) {
      records = this.pending;
      this.pending = [];
      this.pendingChars = 0;
    } else {
      let n = 0;
      let chars = 0;
      while (
        n < this.pending.length &&
        (n === 0 || chars + this.pending[n]!.length <= MAX_WRITE_CHARS)
      )
        chars += this.pending[n++]!.length;
      records = this.pending.splice(0, n);
      this.pendingChars -= chars;
    }
    const text = records.length === 1 ? records[0]! : records.join('');
    // After a batch was cut off by an error, start on a new line rather than finish someone else's record.
    const out = this.lineOpen ? `\n${text}` : text;
    // Records are ASCII but for a value's non-ASCII characters, and ASCII is its own UTF-8: copied
    // as Latin-1 (no encoding) when the UTF-8 byte count says every character is ASCII (any other
    // character takes more than one byte).
    this.inFlight = Buffer.from(
      out,
      Buffer.byteLength(out, 'utf8') === out.length ? 'latin1' : 'utf8',
    );
    this.inFlightRecords = records.length;
    if (this.rotation && this.regularFile) this.rotateIfDue(this.inFlight.length);
    this.writeInFlight();
  }

  /**
   * How many of `records`, from the first, fit in one write of maxWriteBytes (at least one: each
   * record is within it, see write), after `extra` bytes.
   */
  private wholeWriteCount(records: readonly string[], extra: number): number {
    const max = this.maxWriteBytes!;
    let bytes = extra;
    let n = 0;
    while (n < records.length) {
      bytes += Buffer.byteLength(records[n]!);
      if (bytes > max && n > 0) break;
      n++;
    }
    return n;
  }

  /** Rotates the file (lumberjack) when this batch would take it past its size; no write is in flight. */
  private rotateIfDue(adding: number): void {
    const size = fileSize(this.fd);
    if (!this.rotation!.due(size, adding)) return;
    try {
      this.fd = this.rotation!.rotate(this.fd);
      this.lineOpen = false;
    } catch (err) {
      // Not renamed: keep writing to the file as it is.
      this.report(err, 'write');
    }
  }

  private readonly writeInFlight = (): void => {
    const buf = this.inFlight!;
    this.retryTimer = undefined;
    this.writing = true;
    this.writeStartedAt = Date.now();
    this.writeSeq++;
    this.watch();
    this.sizeBeforeWrite = this.regularFile ? fileSize(this.fd) : -1;
    fs.write(this.fd, buf, 0, buf.length, null, this.written);
  };

  private readonly written = (err: NodeJS.ErrnoException | null, n: number): void => {
    this.writing = false;
    if (this.inFlight === undefined) return; // written synchronously at exit meanwhile
    if (err) {
      if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
        // A non-blocking pipe or terminal is full: give the reader time, a little more each time.
        // Unref'd: a target nobody reads must not keep the process alive (the exit hook has the last word).
        this.retryTimer = setTimeout(this.writeInFlight, this.busyDelay);
        this.retryTimer.unref();
        this.busyDelay = Math.min(this.busyDelay * 2, BUSY_RETRY_MAX_MS);
        return;
      }
      if (err.code === 'EBADF' || err.code === 'EPIPE') {
        // Nobody will ever read this target again: stop trying.
        this.inFlight = undefined;
        this.settle(this.inFlightRecords);
        this.fail(err, 'stopped');
        return;
      }
      // The batch is dropped (lineOpen stays true if part of it was written); later batches try again.
      this.report(err, 'write');
    } else if (n < this.inFlight.length) {
      this.busyDelay = BUSY_RETRY_FIRST_MS;
      this.lineOpen = true;
      this.inFlight = this.inFlight.subarray(n);
      this.writeInFlight();
      return;
    } else {
      this.busyDelay = BUSY_RETRY_FIRST_MS;
      this.lineOpen = false;
    }
    this.inFlight = undefined;
    this.settle(this.inFlightRecords);
    if (this.pendingChars >= BATCH_CHARS || (this.turn === undefined && this.pending.length > 0))
      this.startWrite();
    this.closeIfIdle();
  };

  /** Counts `records` as done and resolves the flushes waiting for them. */
  private settle(records: number): void {
    this.done += records;
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.target <= this.done) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** The file cannot be opened, or its reader is gone: report it, drop what is queued and everything after. */
  private fail(err: unknown, kind: 'open' | 'stopped'): void {
    this.state = 'failed';
    this.bypass = true;
    this.report(err, kind);
    this.pending = [];
    this.pendingChars = 0;
    this.clearTurn();
    this.turn = undefined;
    clearTimeout(this.watchdog);
    untrack(this);
    this.settle(this.accepted - this.done);
    if (this.fdFixed === undefined && this.fd >= 0) {
      fs.close(this.fd, () => undefined);
      this.fd = -1;
    }
  }

  private idle(): boolean {
    return this.inFlight === undefined && this.pending.length === 0 && this.state !== 'opening';
  }

  /** Closes the file once close() asked for it and nothing is left to write. */
  private closeIfIdle(): void {
    if (this.closeFile && this.idle()) void this.closeFd();
  }

  private closeFd(): Promise<void> {
    this.closeFile = false;
    const fd = this.fd;
    if (fd < 0) return Promise.resolve();
    this.fd = -1;
    this.state = 'closed';
    return new Promise((resolve) => {
      fs.close(fd, (err) => {
        if (err) this.report(err, 'write');
        resolve();
      });
    });
  }

  /** Says once on stderr that this output failed; a failing log target must not take the service down. */
  private report(err: unknown, kind: 'open' | 'write' | 'stopped'): void {
    if (this.errorReported) return;
    this.errorReported = true;
    const message = err instanceof Error ? err.message : String(err);
    const what =
      kind === 'open'
        ? `cannot open ${this.outputPath} for log records: ${message}; its records are dropped (check the outputPaths entry and the folder's permissions)`
        : kind === 'stopped'
          ? `cannot write log records to ${this.outputPath}: ${message}; its reader is gone, so this and all later records for it are dropped`
          : `cannot write log records to ${this.outputPath}: ${message}; those records are dropped, later ones are tried again and further errors are not reported`;
    try {
      // Synchronous and unchecked: process.stderr.write would emit 'error' (and crash) if stderr is the broken one.
      fs.writeSync(2, `svcboot: ${what}\n`);
    } catch {
      // stderr itself is gone: nowhere left to say it.
    }
  }
}

/** Outputs not yet closed, whose queued records are written synchronously at process exit. */
const liveOutputs = new Set<BatchedOutput>();

/** Tracks an open output; one 'exit' listener serves them all (an app per test must not add one each). */
function track(o: BatchedOutput): void {
  if (liveOutputs.size === 0) process.on('exit', writeAllAtExit);
  liveOutputs.add(o);
}

function untrack(o: BatchedOutput): void {
  if (liveOutputs.delete(o) && liveOutputs.size === 0) process.off('exit', writeAllAtExit);
}

/** Set once the 'exit' hook ran. */
let processExiting = false;

function writeAllAtExit(): void {
  processExiting = true;
  for (const o of liveOutputs) o.writeAllSync();
}

/** Writes all of `buf` to `fd`, waiting briefly while a non-blocking pipe is full; gives up on it after EXIT_BUSY_LIMIT_MS. */
function writeFullySync(fd: number, buf: Buffer): void {
  let busySince = 0;
  while (buf.length > 0) {
    try {
      buf = buf.subarray(fs.writeSync(fd, buf));
      busySince = 0;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EBUSY') throw err;
      const now = Date.now();
      busySince ||= now;
      if (now - busySince > EXIT_BUSY_LIMIT_MS) throw err;
      Atomics.wait(sleeper, 0, 0, 10);
    }
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function isRegularFile(fd: number): boolean {
  try {
    return fs.fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

/** The size of the file open on `fd`, or -1 when it cannot be read. */
function fileSize(fd: number): number {
  try {
    return fs.fstatSync(fd).size;
  } catch {
    return -1;
  }
}

/** Resolves when `promise` settles or after `ms`, whichever comes first (the timer does not keep the process alive). */
function withinLimit(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
