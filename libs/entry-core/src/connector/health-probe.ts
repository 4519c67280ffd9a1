import type { EntryHealth } from '../entry.js';

export interface HealthProbeOptions {
  /** Checks the backend once (e.g. `SELECT 1`); rejects when it is down. */
  probe(signal: AbortSignal): Promise<void>;
  /** Time between the end of one probe and the start of the next. */
  intervalMs: number;
  /** A probe that takes longer fails. */
  timeoutMs: number;
  /** Called when the state changes: to log the outage and the recovery. */
  onChange?(health: EntryHealth, cause: unknown): void;
}

const UP: EntryHealth = { ok: true, detail: 'ok' };

/**
 * A connector's health from a background probe, for `Entry.backendHealth()` when the driver does not
 * report its connection state itself (a pool connects per query). The timer does not keep the
 * process alive; `health()` answers the last probe's result without I/O.
 */
export class HealthProbe {
  private state: EntryHealth = UP;
  private timer: NodeJS.Timeout | undefined;
  private running: AbortController | undefined;
  private started = false;
  private stopped = false;

  constructor(private readonly options: HealthProbeOptions) {}

  health(): EntryHealth {
    return this.state;
  }

  /** Starts probing every `intervalMs` (the first probe after one interval: bootstrap just connected). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running?.abort();
  }

  /** Probes now; resolves with the new state. */
  async check(): Promise<EntryHealth> {
    const controller = new AbortController();
    this.running = controller;
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    let next: EntryHealth;
    let cause: unknown;
    try {
      await Promise.race([
        this.options.probe(controller.signal),
        new Promise<never>((_, reject) =>
          controller.signal.addEventListener(
            'abort',
            () => reject(new Error(`no answer within ${this.options.timeoutMs} ms`)),
            { once: true },
          ),
        ),
      ]);
      next = UP;
    } catch (err) {
      cause = err;
      next = { ok: false, detail: `probe failed (${shortCause(err)})` };
    } finally {
      clearTimeout(timer);
      if (this.running === controller) this.running = undefined;
    }
    // Stopped meanwhile (the entry is closing): its end is no outage.
    if (this.stopped) return this.state;
    const changed = next.ok !== this.state.ok || next.detail !== this.state.detail;
    this.state = next;
    if (changed) this.options.onChange?.(next, cause);
    return next;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }
}

/** An error's code (`ECONNREFUSED`, `57P01`) or a short message: no addresses. */
function shortCause(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const message = err instanceof Error ? err.message : String(err);
  return message.startsWith('no answer within') ? 'timeout' : 'error';
}
