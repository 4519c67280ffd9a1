import http2 from 'node:http2';
import { Duplex } from 'node:stream';

/**
 * The one multiplexed in-memory HTTP/2 connection a bridge (gRPC-Web, Connect) opens to the
 * entry's own grpc-js server: the server end goes to grpc-js's connection injector, the client end
 * to an HTTP/2 session the bridge sends its calls on. Opened on first use, again after it closes.
 */
export class InMemoryGrpcConnection {
  private session: http2.ClientHttp2Session | undefined;
  private shut = false;

  /**
   * @param inject hands the server end of an in-memory connection to grpc-js.
   * @param authority the URL the client session is made for (never resolved).
   */
  constructor(
    private readonly inject: (socket: Duplex) => void,
    private readonly authority: string,
  ) {}

  /** Whether close() was called: no new calls. */
  get closed(): boolean {
    return this.shut;
  }

  /** Opens a gRPC call with these request headers; throws when the connection cannot take one. */
  request(headers: http2.OutgoingHttpHeaders): http2.ClientHttp2Stream {
    return this.connect().request(headers, { endStream: false });
  }

  /** No new calls; the in-memory connection goes with grpc-js's own shutdown. */
  close(): void {
    this.shut = true;
    this.session?.close();
  }

  private connect(): http2.ClientHttp2Session {
    const live = this.session;
    if (live && !live.closed && !live.destroyed) return live;
    const [client, server] = duplexPair();
    this.inject(server);
    const session = http2.connect(this.authority, { createConnection: () => client });
    session.on('error', () => {});
    session.on('close', () => {
      if (this.session === session) this.session = undefined;
    });
    this.session = session;
    return session;
  }
}

/** Two connected in-memory streams: what one writes, the other reads. */
export function duplexPair(): [Duplex, Duplex] {
  let a: Duplex;
  let b: Duplex;
  const make = (other: () => Duplex): Duplex =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        other().push(chunk);
        cb();
      },
      final(cb) {
        other().push(null);
        cb();
      },
      destroy(err, cb) {
        const o = other();
        if (!o.destroyed) o.destroy();
        cb(err);
      },
    });
  a = make(() => b);
  b = make(() => a);
  return [a, b];
}
