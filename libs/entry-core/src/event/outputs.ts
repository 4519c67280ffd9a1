import sonicBoom from 'sonic-boom';
import type { SonicBoom } from 'sonic-boom';

// sonic-boom is CommonJS: its class is `module.exports.SonicBoom` at run time.
const SonicBoomClass = (sonicBoom as unknown as { SonicBoom: typeof SonicBoom }).SonicBoom;

/** A buffered, asynchronous write target. */
export interface Output {
  write(chunk: string): void;
}

/**
 * The app's write targets by output path (`stdout`, `stderr` or a file), shared so that
 * two loggers writing to one place never interleave inside a record.
 */
export class OutputSet {
  private readonly open = new Map<string, SonicBoom>();
  private readonly handles = new Map<string, Output>();
  private closed = false;

  get(outputPath: string): Output {
    let handle = this.handles.get(outputPath);
    if (!handle) {
      const dest = this.destination(outputPath);
      // A line logged after shutdown (a pool's late error, say) is dropped: writing to a closed
      // sonic-boom throws, and a log call must never throw.
      handle = {
        write: (chunk) => {
          if (this.closed) return;
          try {
            dest.write(chunk);
          } catch {
            // Destroyed after an I/O error, which its 'error' handler has reported.
          }
        },
      };
      this.handles.set(outputPath, handle);
    }
    return handle;
  }

  private destination(outputPath: string): SonicBoom {
    let dest = this.open.get(outputPath);
    if (!dest) {
      dest =
        outputPath === 'stdout'
          ? new SonicBoomClass({ fd: 1, sync: false })
          : outputPath === 'stderr'
            ? new SonicBoomClass({ fd: 2, sync: false })
            : new SonicBoomClass({ dest: outputPath, mkdir: true, sync: false, append: true });
      dest.on('error', (err: Error) => {
        // A failing log target must not take the service down; say so once on stderr.
        process.stderr.write(`svcboot: cannot write to ${outputPath}: ${err.message}\n`);
      });
      this.open.set(outputPath, dest);
    }
    return dest;
  }

  /** Writes out everything buffered. */
  async flush(): Promise<void> {
    await Promise.all([...this.open.values()].map((d) => flushOne(d)));
  }

  /** Flushes, then closes files (never the process's stdout or stderr); later writes are dropped. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    const files = [...this.open.entries()].filter(([p]) => p !== 'stdout' && p !== 'stderr');
    await Promise.all(
      files.map(
        ([, d]) =>
          new Promise<void>((resolve) => {
            d.once('close', () => resolve());
            d.once('error', () => resolve());
            d.end();
          }),
      ),
    );
    for (const [p] of files) this.open.delete(p);
  }
}

/**
 * Resolves once everything written so far is on its way to the OS. sonic-boom's own flush(cb)
 * calls back at once when minLength is 0 even while a write is pending, so wait for 'drain'
 * (bounded, so a stuck pipe cannot hold shutdown forever).
 */
function flushOne(d: SonicBoom, limitMs = 5000): Promise<void> {
  const state = d as unknown as { fd: number; _writing: boolean; _len: number };
  return new Promise((resolve) => {
    const timer = setTimeout(done, limitMs);
    timer.unref();
    function done(): void {
      clearTimeout(timer);
      d.off('drain', done);
      d.off('ready', check);
      d.off('error', done);
      resolve();
    }
    function check(): void {
      if (state.fd < 0) return; // still opening: 'ready' calls again
      if (state._writing || state._len > 0) return; // 'drain' calls done
      done();
    }
    d.on('drain', done);
    d.on('ready', check);
    d.on('error', done);
    check();
  });
}
