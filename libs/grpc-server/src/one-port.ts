import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { ListenerQuiet } from '@svcboot/entry-core/internal/http/quiet-listener';

/** Where a connection goes once its protocol is known. */
export interface ConnectionSinks {
  http2(socket: Duplex): void;
  http1(socket: Duplex): void;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * Decides by the first bytes: a connection that starts with the HTTP/2 client preface is gRPC
 * (h2c), anything else is HTTP/1.x. The bytes read are pushed back before the socket is handed on.
 */
function sniff(socket: net.Socket, sinks: ConnectionSinks, timeoutMs: number): void {
  let seen: Buffer = Buffer.alloc(0);
  // A connection that never says enough to be routed would otherwise be held forever.
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  const onData = (chunk: Buffer): void => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const isPrefix = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
    // Undecided while what we have is a strict prefix of the preface (a client may send it in pieces).
    if (isPrefix && n < PREFACE.length) return;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.pause();
    socket.unshift(seen);
    if (isPrefix) sinks.http2(socket);
    else {
      sinks.http1(socket);
      // Node's HTTP/1 server reads the socket handle directly and only sees the bytes pushed
      // back once the stream flows again.
      socket.resume();
    }
  };
  socket.on('data', onData);
}

export interface OnePortOptions {
  tls?: { cert: Buffer; key: Buffer };
  /**
   * How long a new connection may take to be routed: to send the first bytes that tell HTTP/2
   * from HTTP/1.x, or to finish the TLS handshake. Then it is closed. Default 10 s.
   */
  handshakeTimeoutMs?: number;
  /**
   * The most connections open at once (0: no limit). Past it, HEALTH_RESERVE more are taken for
   * health checks only (see `isOverflow`; HTTP/2 ones are closed at once); past those, new
   * connections are closed as soon as they are accepted. `onRefused` is told of each.
   */
  maxConnections?: number;
  onRefused?: () => void;
  /**
   * Told of each connection accepted (before it is routed; refused ones too): the entry's load
   * shedding holds its queue's next round for it (LoadShedding#connectionAccepted), as a new
   * connection's first request is read a turn after it is accepted.
   */
  onAccepted?: () => void;
}

/** Connections over maxConnections still taken, so probes reach /livez and /readyz at the limit. */
export const HEALTH_RESERVE = 16;

/**
 * A TCP (or TLS) listener that splits connections between gRPC and HTTP/1.1. With TLS, ALPN
 * decides (`h2` is gRPC); without it, the first bytes do.
 */
export class OnePortListener {
  private readonly server: net.Server;
  /** More ports of the same listener (listenAlso): the same routing, limit and drain. */
  private readonly others: net.Server[] = [];
  private readonly newServer: () => net.Server;
  /** Each port's accepted connections, for `quiet`. */
  private readonly accepts = new EventEmitter();
  /** Whether responses may close their connection now (false while the listener waits to close). */
  readonly quiet: ListenerQuiet;
  private readonly sockets = new Set<net.Socket>();

  private readonly overflow = new WeakSet<object>();
  /** TLS: `address:port` of raw connections over the limit, to mark their TLS socket once secure. */
  private readonly overflowPeers = new Set<string>();

  constructor(sinks: ConnectionSinks, options: OnePortOptions = {}) {
    const handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
    const max = options.maxConnections ?? 0;
    const refuse = (socket: Duplex): void => {
      socket.destroy();
      options.onRefused?.();
    };
    /** Counts the connection in; false when it was refused. */
    const track = (socket: net.Socket): boolean => {
      if (max > 0 && this.sockets.size >= max) {
        if (this.sockets.size >= max + HEALTH_RESERVE) {
          refuse(socket);
          return false;
        }
        this.overflow.add(socket);
        if (options.tls) {
          const peer = peerOf(socket);
          this.overflowPeers.add(peer);
          socket.once('close', () => this.overflowPeers.delete(peer));
        }
      }
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      return true;
    };
    if (max > 0) {
      const { http2 } = sinks;
      // A connection over the limit may only ask for health, over HTTP/1.1.
      sinks = {
        http1: sinks.http1,
        http2: (socket) => (this.overflow.has(socket) ? refuse(socket) : http2(socket)),
      };
    }
    this.newServer = (): net.Server => {
      let server: net.Server;
      if (options.tls) {
        const secure = tls.createServer({
          cert: options.tls.cert,
          key: options.tls.key,
          ALPNProtocols: ['h2', 'http/1.1'],
          noDelay: true,
          handshakeTimeout: handshakeTimeoutMs,
        });
        secure.on('connection', track);
        secure.on('secureConnection', (socket: tls.TLSSocket) => {
          // The TLS socket is another object than the raw one counted in: carry the mark over.
          if (this.overflowPeers.size > 0 && this.overflowPeers.has(peerOf(socket)))
            this.overflow.add(socket);
          if (socket.alpnProtocol === 'h2') sinks.http2(socket);
          else sinks.http1(socket);
        });
        server = secure;
      } else {
        // Small gRPC and REST responses must not wait for Nagle's algorithm.
        server = net.createServer({ noDelay: true }, (socket) => {
          if (track(socket)) sniff(socket, sinks, handshakeTimeoutMs);
        });
      }
      server.on('connection', () => this.accepts.emit('connection'));
      if (options.onAccepted) server.on('connection', options.onAccepted);
      return server;
    };
    this.server = this.newServer();
    this.quiet = new ListenerQuiet(this.accepts);
  }

  listen(port: number, host?: string): Promise<number> {
    return listenOn(this.server, port, host);
  }

  /**
   * Listens on one more port as well: its connections are routed, counted against
   * maxConnections, drained and closed with the first port's (the rk-boot porting mode's gwPort).
   */
  listenAlso(port: number, host?: string): Promise<number> {
    const server = this.newServer();
    this.others.push(server);
    return listenOn(server, port, host);
  }

  /** Stops accepting; open connections stay until they end or `destroyAll`. */
  stopAccepting(): void {
    // close() would only call back once every connection is gone; the entry drains those itself.
    for (const server of [this.server, ...this.others]) if (server.listening) server.close();
  }

  /**
   * Stops accepting once no connection has come for a moment (ListenerQuiet: closing the listener
   * resets the connections the kernel holds for it, each with a request already sent).
   */
  async stopAcceptingWhenQuiet(options: { maxMs?: number; signal?: AbortSignal }): Promise<void> {
    await this.quiet.settle(options);
    this.stopAccepting();
  }

  /**
   * Whether a connection came in over maxConnections (cleartext or TLS): its HTTP/1.1 requests
   * get health answers only, and `Connection: close`.
   */
  isOverflow(socket: object): boolean {
    return this.overflow.has(socket);
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  destroyAll(): void {
    for (const s of this.sockets) s.destroy();
  }
}

function listenOn(server: net.Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/** The peer's `address:port`, the same for a raw socket and the TLS socket over it. */
function peerOf(socket: net.Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}
