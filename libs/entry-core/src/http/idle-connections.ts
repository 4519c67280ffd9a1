import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long an HTTP/1.1 keep-alive connection must have been idle (no request in progress, no
 * byte received since its last response) before shutdown closes it. A client may be sending a
 * request on a connection that has only just become idle, and closing it then resets that
 * request (HTTP/1.1 cannot tell a client to stop using a connection except in a response).
 */
export const DRAIN_IDLE_CLOSE_MS = 1000;

interface ConnectionState {
  /** Requests read and not yet answered (a keep-alive connection serves one after another). */
  active: number;
  /** When the last response ended (or the connection opened), and what had been read by then. */
  idleSinceMs: number;
  bytesReadThen: number;
}

/**
 * The connections of an HTTP/1.1 server and how long each has been idle, so that shutdown closes
 * a keep-alive connection only when no request can be on its way on it: one that carried a
 * request during the drain was answered with `Connection: close` (Node closes it after the
 * response), and one still idle is closed only once it has been idle for `DRAIN_IDLE_CLOSE_MS`
 * with nothing received. Node's `closeIdleConnections` (also run by `server.close()`) closes
 * a connection the instant its response ends, which resets the next request a keep-alive client
 * had already sent.
 */
export class IdleConnections {
  private readonly states = new Map<Socket, ConnectionState>();

  constructor(server: http.Server) {
    server.on('connection', (socket: Socket) => {
      // Bytes read before the server got the connection (a listener that looked at the first
      // bytes to route it) are a request on its way: counted as received after "idle".
      this.states.set(socket, { active: 0, idleSinceMs: Date.now(), bytesReadThen: 0 });
      socket.once('close', () => this.states.delete(socket));
    });
    const states = this.states;
    // One listener for every response (no closure, no once wrapper per request): a response
    // closes once, and its request keeps the socket (the response lets go of it first).
    function responseClosed(this: http.ServerResponse): void {
      const socket = this.req.socket;
      const state = states.get(socket);
      if (!state) return;
      state.active--;
      state.idleSinceMs = Date.now();
      state.bytesReadThen = socket.bytesRead;
    }
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const state = states.get(req.socket);
      if (!state) return;
      state.active++;
      res.on('close', responseClosed);
    });
  }

  /** Connections open (idle or not). */
  get size(): number {
    return this.states.size;
  }

  /**
   * Closes the connections idle for at least `idleMs` with nothing received since their last
   * response; one that received bytes since (a request on its way, its headers not complete
   * yet) is busy until that request is answered (Node's headersTimeout bounds a slow one).
   * Returns how many connections stay open.
   */
  closeIdle(idleMs = DRAIN_IDLE_CLOSE_MS, now = Date.now()): number {
    for (const [socket, state] of this.states) {
      if (state.active > 0 || socket.bytesRead !== state.bytesReadThen) continue;
      if (now - state.idleSinceMs >= idleMs) {
        socket.destroy();
        this.states.delete(socket);
      }
    }
    return this.states.size;
  }

  /** Closes every connection, busy or not (the shutdown's time is up). */
  closeAll(): void {
    for (const socket of this.states.keys()) socket.destroy();
    this.states.clear();
  }
}
