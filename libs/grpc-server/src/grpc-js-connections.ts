import type net from 'node:net';
import type { ServerInterceptingCall, ServerInterceptor } from '@grpc/grpc-js';

/** A connection's own key: what grpc-js's public `getConnectionInfo()` tells of it, and its socket. */
function keyOf(
  remoteAddress: string | undefined,
  remotePort: number | undefined,
  localPort: number | undefined,
): string {
  return `${remoteAddress ?? ''}|${remotePort ?? ''}|${localPort ?? ''}`;
}

/**
 * `http2FirstStreamTimeoutMs` with `server: grpc-js`, through grpc-js's public API only: grpc-js
 * owns the HTTP/2 session of each connection the entry hands it (`injectConnection`) and tells
 * nobody of it, so the entry times the socket it accepted and a call on it clears the timer. The
 * call is seen by an interceptor, which grpc-js runs for every call to a method it has; its
 * `getConnectionInfo()` names the connection (remote address and port, local port). A connection
 * on which no call reached a method within `timeoutMs` of being handed over (only the preface and
 * SETTINGS, or only calls grpc-js refused before any interceptor) is closed, its socket destroyed
 * (no GOAWAY: the session is grpc-js's). One timer per connection, none per call; a call costs a
 * Map lookup only while some connection is still waiting for its first call.
 */
export class FirstCallTimeout {
  private readonly waiting = new Map<string, { socket: net.Socket; timer: NodeJS.Timeout }>();
  /** How many connections it closed (tests). */
  closed = 0;

  constructor(readonly timeoutMs: number) {}

  /** A connection about to be handed to grpc-js (TLS, when on, already ended by the listener). */
  watch(socket: net.Socket): void {
    const key = keyOf(socket.remoteAddress, socket.remotePort, socket.localPort);
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      if (socket.destroyed) return;
      this.closed++;
      socket.destroy();
    }, this.timeoutMs);
    timer.unref();
    this.waiting.set(key, { socket, timer });
    socket.once('close', () => {
      const w = this.waiting.get(key);
      if (w?.socket !== socket) return;
      clearTimeout(w.timer);
      this.waiting.delete(key);
    });
  }

  /** Clears the timer of the call's connection; hands the call on as it is. */
  readonly interceptor: ServerInterceptor = (_method, call) => {
    if (this.waiting.size > 0) {
      const c = call.getConnectionInfo();
      const key = keyOf(c.remoteAddress, c.remotePort, c.localPort);
      const w = this.waiting.get(key);
      if (w !== undefined) {
        clearTimeout(w.timer);
        this.waiting.delete(key);
      }
    }
    // grpc-js types an interceptor's result as its class; it only uses the interface, which `call` is.
    return call as ServerInterceptingCall;
  };

  stop(): void {
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }
}
