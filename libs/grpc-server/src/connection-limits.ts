import { readFileSync } from 'node:fs';
import type http2 from 'node:http2';
import { Counter, type Registry } from 'prom-client';
import { whenStreamCloses } from './native/call.js';

/** The cap on the automatic maxConnections: each open HTTP/2 connection holds tens of KB. */
export const AUTO_MAX_CONNECTIONS_CAP = 10_000;

/**
 * The process's open-file limit (soft) from /proc/self/limits (Linux; Node raises the soft limit
 * to the hard one at start-up), undefined elsewhere or when unreadable.
 */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(text);
  if (!m) return undefined;
  return m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

/**
 * `maxConnections: 0` (the default) means: 80 % of the open-file limit (the rest is for files,
 * outbound connections and the health reserve), at most AUTO_MAX_CONNECTIONS_CAP.
 */
export function effectiveMaxConnections(configured: number, limit = openFileLimit()): number {
  if (configured > 0) return configured;
  if (limit === undefined || !Number.isFinite(limit)) return AUTO_MAX_CONNECTIONS_CAP;
  return Math.max(1, Math.min(AUTO_MAX_CONNECTIONS_CAP, Math.floor(limit * 0.8)));
}

/**
 * Counts connections refused at the limit (`svc_connections_refused_total{entry_name}`) and
 * logs a warning at most once per `intervalMs`, with how many were refused since the last one.
 */
export class RefusedConnections {
  private readonly counter: Counter<'entry_name'>;
  private pending = 0;
  private lastWarnMs = -Infinity;

  constructor(
    registry: Registry,
    private readonly entryName: string,
    private readonly max: number,
    private readonly warn: (message: string) => void,
    private readonly intervalMs = 60_000,
  ) {
    this.counter = new Counter({
      name: 'svc_connections_refused_total',
      help: 'Connections closed as soon as accepted because the entry had maxConnections open.',
      labelNames: ['entry_name'],
      registers: [registry],
    });
  }

  refused(now = Date.now()): void {
    this.counter.inc({ entry_name: this.entryName });
    this.pending++;
    if (now - this.lastWarnMs >= this.intervalMs) {
      this.warn(
        `${this.pending} new connection(s) refused: maxConnections (${this.max}) are open; raise maxConnections (below the process's open-file limit) or add instances (this warning is repeated at most once a minute)`,
      );
      this.pending = 0;
      this.lastWarnMs = now;
    }
  }
}

/**
 * Closes (GOAWAY, then the socket) an HTTP/2 connection of the entry's own HTTP/2 server
 * (`server: node`) that has opened no stream within `timeoutMs` of its start: one timer per
 * connection, cleared by its first stream. (`server: grpc-js`: grpc-js-connections.ts.)
 */
export function closeConnectionsWithoutStreams(h2: http2.Http2Server, timeoutMs: number): void {
  if (timeoutMs <= 0) return;
  h2.on('session', (session: http2.ServerHttp2Session) => {
    const timer = setTimeout(() => {
      if (session.destroyed || session.closed) return;
      session.goaway();
      session.destroy();
    }, timeoutMs);
    timer.unref();
    session.once('stream', () => clearTimeout(timer));
    session.once('close', () => clearTimeout(timer));
  });
}

/** What the idle sweep knows of one HTTP/2 connection. */
interface SessionUse {
  /** Streams open now. */
  active: number;
  /** The sweep tick at which the last stream ended (or the connection started). */
  idleSince: number;
  readonly onStream: (stream: http2.ServerHttp2Stream) => void;
  readonly onStreamClose: () => void;
}

/**
 * Closes HTTP/2 connections of the entry's own HTTP/2 server (`server: node`; gRPC, h2c or TLS
 * `h2`: every HTTP/2 connection of the port goes to it) whose streams have all ended at least `idleMs` ago: GOAWAY, then the socket once the
 * peer has it. Instead of grpc-js's `grpc.max_connection_idle_ms` (a timer refresh, a map lookup
 * and a trace string per call), per call only a counter moves; one sweep timer per entry, every
 * `idleMs / 4` (at most 30 s), finds the idle ones, so a connection closes between `idleMs` and
 * `idleMs` plus one sweep interval after its last call.
 */
export class IdleHttp2Connections {
  private readonly sessions = new Map<http2.ServerHttp2Session, SessionUse>();
  private readonly timer: NodeJS.Timeout;
  private readonly ticks: number;
  private tick = 0;
  /** How many connections it closed (tests, the bench). */
  closed = 0;

  constructor(
    h2: http2.Http2Server,
    readonly idleMs: number,
  ) {
    const sweepMs = Math.max(10, Math.min(30_000, Math.floor(idleMs / 4)));
    this.ticks = Math.ceil(idleMs / sweepMs);
    h2.on('session', (s) => this.watch(s));
    this.timer = setInterval(() => this.sweep(), sweepMs);
    this.timer.unref();
  }

  private watch(session: http2.ServerHttp2Session): void {
    const use: SessionUse = {
      active: 0,
      idleSince: this.tick,
      onStream: (stream) => {
        use.active++;
        // From the gRPC call's own 'close' listener when the stream is one (one listener a stream).
        whenStreamCloses(stream, use.onStreamClose);
      },
      onStreamClose: () => {
        if (--use.active === 0) use.idleSince = this.tick;
      },
    };
    this.sessions.set(session, use);
    session.on('stream', use.onStream);
    session.once('close', () => this.sessions.delete(session));
  }

  private sweep(): void {
    this.tick++;
    for (const [session, use] of this.sessions) {
      if (use.active > 0 || this.tick - use.idleSince < this.ticks) continue;
      this.sessions.delete(session);
      if (session.closed || session.destroyed) continue;
      this.closed++;
      // GOAWAY (no stream is open), then close once it is written; destroy if the peer stalls.
      session.close();
      const force = setTimeout(() => session.destroy(), 5000);
      force.unref();
      session.once('close', () => clearTimeout(force));
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.sessions.clear();
  }
}
