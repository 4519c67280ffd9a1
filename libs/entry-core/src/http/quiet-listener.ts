import type { EventEmitter } from 'node:events';

/**
 * How long a listener must have accepted no connection before shutdown closes it. Closing a
 * listening socket resets every connection the kernel has completed but the server has not
 * accepted yet, and a keep-alive client told `Connection: close` reconnects at once, so its next
 * request, already sent, would be reset. While the entry waits for this quiet, its responses keep
 * their connection (see {@link ListenerQuiet}), so such a client stops opening new ones.
 */
export const LISTENER_QUIET_MS = 100;

/** The longest shutdown waits for that quiet (new clients keep coming): then it closes anyway. */
export const LISTENER_QUIET_MAX_MS = 2000;

/**
 * The last step before an HTTP/1.1 listener closes at shutdown (ARCHITECTURE.md §2): from
 * `settle()` until the listener has accepted nothing for `quietMs`, responses keep their
 * connection (`closesConnections` is false), so keep-alive clients, which were being told
 * `Connection: close` while the app drained, hold on to the connections they have instead of
 * opening new ones that the listener's close would reset. Once it is quiet the listener closes,
 * and each kept connection's next response says `Connection: close`.
 */
/** Turns of the event loop in a row, each with a poll phase, that must accept nothing. */
const QUIET_TURNS = 3;

export class ListenerQuiet {
  private waiting = false;
  /** When the listener last accepted a connection, and how many it has accepted. */
  private lastMs = 0;
  private accepted = 0;

  /** `server`: a net.Server, or a TLS one (its `connection` event is the TCP accept). */
  constructor(server: EventEmitter) {
    server.on('connection', () => {
      this.lastMs = Date.now();
      this.accepted++;
    });
  }

  /** False while waiting for the quiet: a response then keeps its keep-alive connection. */
  get closesConnections(): boolean {
    return !this.waiting;
  }

  /**
   * Resolves once the listener has accepted no connection for `quietMs` and, after that, in
   * QUIET_TURNS turns of the event loop in a row; after `maxMs` at most; at once when `signal`
   * aborts (the shutdown's time is up). The turns matter on a busy loop: a connection the kernel
   * holds is accepted only in a turn's poll phase (and a busy Node process took about one per
   * turn), so time alone can pass while connections wait. The caller closes the listener right
   * after.
   */
  async settle(
    options: { quietMs?: number; maxMs?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const quietMs = options.quietMs ?? LISTENER_QUIET_MS;
    const maxMs = options.maxMs ?? LISTENER_QUIET_MAX_MS;
    const signal = options.signal;
    if (signal?.aborted || maxMs <= 0) return;
    this.waiting = true;
    const until = Date.now() + maxMs;
    const over = (): boolean => signal?.aborted === true || Date.now() >= until;
    try {
      for (;;) {
        const seen = this.accepted;
        for (let i = 0; i < QUIET_TURNS; i++) await nextTurn();
        if (over()) return;
        if (this.accepted === seen && Date.now() - this.lastMs >= quietMs) return;
        await sleep(Math.max(1, Math.min(until, this.lastMs + quietMs) - Date.now()), signal);
        if (over()) return;
      }
    } finally {
      this.waiting = false;
    }
  }
}

/** Resolves in the check phase of the event loop's next turn, after its poll phase. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
