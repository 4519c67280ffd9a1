import net from 'node:net';

/** One HTTP/1.1 response as read off the wire (interim 1xx responses included). */
export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

/**
 * A hand-driven HTTP/1.1 connection: the test writes exactly the bytes it wants (a request in
 * pieces, pipelined requests, `Expect: 100-continue`) and reads responses one by one. For tests
 * that need to hold a request half-sent across an event such as a shutdown signal.
 */
export class RawHttpConnection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;
  /** Resolves when the peer or we closed the connection. */
  readonly closed: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    socket.on('error', (err) => {
      this.error = err;
      this.wake?.();
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.ended = true;
        this.wake?.();
        resolve();
      }),
    );
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host, noDelay: true });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawHttpConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /**
   * Opens a connection and sends a request line and its Host header, but not the blank line that
   * ends the headers: the server has begun the request (a draining server does not close the
   * connection as idle) without handling it yet. `finishHeaders` sends the rest.
   */
  static async begin(
    port: number,
    requestLine: string,
    host = '127.0.0.1',
  ): Promise<RawHttpConnection> {
    const conn = await RawHttpConnection.open(port, host);
    await conn.write(`${requestLine} HTTP/1.1\r\nHost: ${host}:${port}\r\n`);
    return conn;
  }

  /** Ends the headers of a request opened with `begin` and reads its response. */
  async finishHeaders(timeoutMs?: number): Promise<RawResponse> {
    await this.write('\r\n');
    return this.nextResponse(timeoutMs);
  }

  /** True once the connection is closed. */
  get isClosed(): boolean {
    return this.ended;
  }

  /** Writes bytes; resolves once they are handed to the kernel. */
  write(text: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(text, (err) => (err ? reject(err) : resolve())),
    );
  }

  /**
   * The next response on the connection (a `100 Continue` counts as one). Rejects when the
   * connection closes first or nothing complete arrives within `timeoutMs`.
   */
  async nextResponse(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.tryParse();
      if (parsed) return parsed;
      if (this.ended || this.error) {
        throw new Error(
          `connection ${this.error ? `failed (${this.error.message})` : 'closed'} before a complete response; received: ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`,
        );
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no complete response within ${timeoutMs} ms; received: ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private tryParse(): RawResponse | undefined {
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffer
      .subarray(0, headEnd)
      .toString('latin1')
      .split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!m) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify(statusLine)}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let rest = this.buffer.subarray(headEnd + 4);
    let body: Buffer;
    if (status < 200 || status === 204 || status === 304) {
      body = Buffer.alloc(0);
    } else if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
      const chunks: Buffer[] = [];
      let at = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
        if (size === 0) {
          // No trailers expected: the terminating empty line follows.
          if (rest.length < lineEnd + 4) return undefined;
          at = lineEnd + 4;
          break;
        }
        if (rest.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(chunks);
      rest = rest.subarray(at);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < length) return undefined;
      body = rest.subarray(0, length);
      rest = rest.subarray(length);
    } else {
      // Delimited by the end of the connection.
      if (!this.ended) return undefined;
      body = rest;
      rest = Buffer.alloc(0);
    }
    this.buffer = rest;
    return { status, headers, body: body.toString('utf8') };
  }
}
