import fs from 'node:fs';
import path from 'node:path';

/** A buffered, asynchronous write target. */
export interface Output {
  write(chunk: string): void;
}

/** Pending characters past which a batch is written at once instead of at the end of the turn. */
const BATCH_CHARS = 64 * 1024;
/** The most characters joined into one write (a string cannot grow without bound). */
const MAX_WRITE_CHARS = 1024 * 1024;
/** Wait before writing again to a pipe or terminal that answered EAGAIN (sonic-boom waits as long). */
const BUSY_RETRY_MS = 100;
/** At process exit, give up on a pipe that keeps answering EAGAIN after this long. */
const EXIT_BUSY_LIMIT_MS = 1000;
/** flush() and close() stop waiting for a stuck target after this long. */
const FLUSH_LIMIT_MS = 5000;

const dropped: Output = { write: () => undefined };

/**
 * The app's write targets by output path (`stdout`, `stderr` or a file), shared so that
 * two loggers writing to one place never interleave inside a record.
 *
 * A write only queues the record; the records of one event-loop turn go out as one write at
 * the end of the turn (or sooner once 64 KiB are pending). See {@link BatchedOutput}.
 */
export class OutputSet {
  private readonly outputs = new Map<string, BatchedOutput>();
  private closed = false;

  get(outputPath: string): Output {
    if (this.closed) return dropped;
    let output = this.outputs.get(outputPath);
    if (!output) {
      output = new BatchedOutput(outputPath);
      this.outputs.set(outputPath, output);
    }
    return output;
  }

  /** Resolves once every record written so far has been handed to the OS. */
  async flush(): Promise<void> {
    await Promise.all([...this.outputs.values()].map((o) => o.flush()));
  }

  /** Flushes, then closes files (never the process's stdout or stderr); later writes are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.outputs.values()].map((o) => o.close()));
  }
}

/**
 * One write target. `write` pushes the record onto a list; the first write of an event-loop turn
 * schedules one `setImmediate` that joins the list and hands it to `fs.write` as one buffer
 * (sooner when BATCH_CHARS are pending). While a write is in flight new records wait for the
 * next batch, so records keep their order and a record is never split between writers. Partial
 * writes continue from where they stopped; EAGAIN from a non-blocking pipe or terminal is
 * retried after BUSY_RETRY_MS; any other error is reported once on stderr and the batch is
 * dropped. At process exit the records still queued are written synchronously.
 */
class BatchedOutput implements Output {
  private readonly fdFixed: number | undefined;
  private fd = -1;
  private state: 'opening' | 'open' | 'failed' | 'closed' = 'opening';
  private closed = false;
  private closeFile = false;

  /** Records queued for the next batch, and their length in characters. */
  private pending: string[] = [];
  private pendingChars = 0;
  private turn: NodeJS.Immediate | undefined;

  /** The unwritten rest of the batch being written, and how many records it holds. */
  private inFlight: Buffer | undefined;
  private inFlightRecords = 0;
  /** True while fs.write runs on the thread pool (false while waiting to retry after EAGAIN). */
  private writing = false;

  /** Records accepted, and records handed to the OS (or dropped after an error). */
  private accepted = 0;
  private done = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  private errorReported = false;

  constructor(private readonly outputPath: string) {
    this.fdFixed = outputPath === 'stdout' ? 1 : outputPath === 'stderr' ? 2 : undefined;
    if (this.fdFixed !== undefined) {
      this.fd = this.fdFixed;
      this.state = 'open';
    } else {
      fs.mkdir(path.dirname(outputPath), { recursive: true }, (mkdirErr) => {
        if (mkdirErr) return this.opened(mkdirErr, -1);
        fs.open(outputPath, 'a', (err, fd) => this.opened(err, fd));
      });
    }
    track(this);
  }

  write(chunk: string): void {
    if (this.closed || this.state === 'failed') return;
    this.pending.push(chunk);
    this.accepted++;
    if ((this.pendingChars += chunk.length) >= BATCH_CHARS) this.startWrite();
    else this.turn ??= setImmediate(this.endOfTurn);
  }

  /** Resolves once every record accepted so far has been handed to the OS (or dropped after an error), or after FLUSH_LIMIT_MS. */
  flush(): Promise<void> {
    const target = this.accepted;
    if (this.done >= target) return Promise.resolve();
    this.startWrite();
    return new Promise((resolve) => {
      const waiter = {
        target,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      }, FLUSH_LIMIT_MS);
      timer.unref();
      this.waiters.push(waiter);
    });
  }

  /** Drops later writes, flushes, and closes a file (at once, or when a write still in flight after the flush's time limit ends). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    untrack(this);
    if (this.fdFixed !== undefined) return;
    this.closeFile = true;
    if (this.idle()) await this.closeFd();
  }

  /**
   * At process exit: writes the queued records synchronously. A batch already on the thread
   * pool is left to it (writing it again could duplicate it); a batch waiting to retry after
   * EAGAIN is written first.
   */
  writeAllSync(): void {
    if (this.state === 'failed' || this.state === 'closed') return;
    if (this.turn) clearImmediate(this.turn);
    this.turn = undefined;
    const parts: Buffer[] = [];
    if (this.inFlight && !this.writing) parts.push(this.inFlight);
    if (this.pending.length) parts.push(Buffer.from(this.pending.join(''), 'utf8'));
    this.pending = [];
    this.pendingChars = 0;
    if (parts.length === 0) return;
    try {
      if (this.fd < 0) {
        // Exiting before the file finished opening: open it now.
        fs.mkdirSync(path.dirname(this.outputPath), { recursive: true });
        this.fd = fs.openSync(this.outputPath, 'a');
      }
      writeFullySync(this.fd, parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    } catch (err) {
      this.report(err);
    }
  }

  private readonly endOfTurn = (): void => {
    this.turn = undefined;
    this.startWrite();
  };

  private opened(err: NodeJS.ErrnoException | null, fd: number): void {
    if (err) {
      this.fail(err);
      return;
    }
    this.fd = fd;
    this.state = 'open';
    this.startWrite();
    this.closeIfIdle();
  }

  /** Hands the queued records to fs.write as one buffer, unless a write is in flight or the file is not open yet. */
  private startWrite(): void {
    if (this.inFlight !== undefined || this.state !== 'open' || this.pending.length === 0) return;
    let records: string[];
    if (this.pendingChars <= MAX_WRITE_CHARS) {
      records = this.pending;
      this.pending = [];
      this.pendingChars = 0;
    } else {
      let n = 0;
      let chars = 0;
      while (n < this.pending.length && (n === 0 || chars + this.pending[n]!.length <= MAX_WRITE_CHARS)) chars += this.pending[n++]!.length;
      records = this.pending.splice(0, n);
      this.pendingChars -= chars;
    }
    this.inFlight = Buffer.from(records.length === 1 ? records[0]! : records.join(''), 'utf8');
    this.inFlightRecords = records.length;
    this.writeInFlight();
  }

  private readonly writeInFlight = (): void => {
    const buf = this.inFlight!;
    this.writing = true;
    fs.write(this.fd, buf, 0, buf.length, null, this.written);
  };

  private readonly written = (err: NodeJS.ErrnoException | null, n: number): void => {
    this.writing = false;
    if (err) {
      if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
        // A non-blocking pipe or terminal is full: give the reader time.
        setTimeout(this.writeInFlight, BUSY_RETRY_MS);
        return;
      }
      this.report(err); // the batch is dropped; later batches try again
    } else if (n < this.inFlight!.length) {
      this.inFlight = this.inFlight!.subarray(n);
      this.writeInFlight();
      return;
    }
    this.inFlight = undefined;
    this.settle(this.inFlightRecords);
    if (this.pendingChars >= BATCH_CHARS || (this.turn === undefined && this.pending.length > 0)) this.startWrite();
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

  /** The file cannot be opened: report it, drop what is queued and everything after. */
  private fail(err: unknown): void {
    this.state = 'failed';
    this.report(err);
    this.pending = [];
    this.pendingChars = 0;
    untrack(this);
    this.settle(this.accepted - this.done);
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
        if (err) this.report(err);
        resolve();
      });
    });
  }

  /** Says once on stderr that this output failed; a failing log target must not take the service down. */
  private report(err: unknown): void {
    if (this.errorReported) return;
    this.errorReported = true;
    const message = err instanceof Error ? err.message : String(err);
    const what =
      this.state === 'failed'
        ? `cannot open ${this.outputPath} for log records: ${message}; its records are dropped (check the outputPaths entry and the folder's permissions)`
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

function writeAllAtExit(): void {
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
