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
export const LISTENER_QUIET_MAX_MS = 1000;

/**
 * The last step before an HTTP/1.1 listener closes at shutdown (ARCHITECTURE.md §2): from
 * `settle()` until the listener has accepted nothing for `quietMs`, responses keep their
 * connection (`closesConnections` is false), so keep-alive clients, which were being told
 * `Connection: close` while the app drained, hold on to the connections they have instead of
 * opening new ones that the listener's close would reset. Once it is quiet the listener closes,
 * and each kept connection's next response says `Connection: close`.
 */
export class ListenerQuiet {
  private waiting = false;
  /** When the listener last accepted a connection. */
  private lastMs = 0;

  /** `server`: a net.Server, or a TLS one (its `connection` event is the TCP accept). */
  constructor(server: EventEmitter) {
    server.on('connection', () => {
      this.lastMs = Date.now();
    });
  }

  /** False while waiting for the quiet: a response then keeps its keep-alive connection. */
  get closesConnections(): boolean {
    return !this.waiting;
  }

  /**
   * Resolves once the listener has accepted no connection for `quietMs` (after one turn of the
   * event loop when it has not for that long already), after `maxMs` at most, or at once when `signal` aborts (the
   * shutdown's time is up). The caller closes the listener right after.
   */
  async settle(
    options: { quietMs?: number; maxMs?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const quietMs = options.quietMs ?? LISTENER_QUIET_MS;
    const maxMs = options.maxMs ?? LISTENER_QUIET_MAX_MS;
    if (options.signal?.aborted || maxMs <= 0) return;
    this.waiting = true;
    try {
      // Connections the kernel holds are accepted in the event loop's poll phase, which may not
      // have run for a while (a busy loop): let it run once before judging the quiet.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const until = Date.now() + maxMs;
      await new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = (): void => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', done);
          resolve();
        };
        const check = (): void => {
          const now = Date.now();
          if (now >= until || now - this.lastMs >= quietMs) done();
          else timer = setTimeout(check, Math.min(until, this.lastMs + quietMs) - now);
        };
        if (options.signal?.aborted) return resolve();
        options.signal?.addEventListener('abort', done, { once: true });
        check();
      });
    } finally {
      this.waiting = false;
    }
  }
}
