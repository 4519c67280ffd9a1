import http2 from 'node:http2';
import net from 'node:net';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

/**
 * What `server: grpc-js` does where grpc-js's public API leaves no way to do what `server: node`
 * does (README, "server: grpc-js: what grpc-js's public API does not allow"). These run with
 * `server: grpc-js` whatever SVC_GRPC_SERVER says.
 */
const GRPC_JS = '    server: grpc-js\n';

let h: Harness | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await h?.stop();
  h = undefined;
});

/** One request over h2c: the response's `:status` and content type. */
function h2Request(
  base: string,
  headers: http2.OutgoingHttpHeaders,
  body?: Buffer,
): Promise<{ status: number; contentType: string | undefined }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(base);
    session.on('error', reject);
    const req = session.request(headers);
    req.on('response', (hd) => {
      resolve({ status: Number(hd[':status']), contentType: hd['content-type'] });
      req.close();
      session.close();
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A connection that sends the HTTP/2 preface and an empty SETTINGS frame, then nothing. */
function silentHttp2(port: number): Promise<{ closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
      resolve({ closed: () => closed });
    });
    socket.on('close', () => (closed = true));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    sockets.push(socket);
  });
}

describe('server: grpc-js, through its public API only', () => {
  it("serves Connect over HTTP/1.1; over HTTP/2 every stream is grpc-js's, which answers Connect 415", async () => {
    h = await startLibrary(`${GRPC_JS}    connect: { enabled: true }\n`);
    const body = JSON.stringify({ text: 'c' });
    const h1 = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(h1.status).toBe(200);
    expect(await h1.json()).toEqual({ text: 'pong c' });
    const h2 = await h2Request(
      h.base,
      { ':method': 'POST', ':path': '/test.v1.Library/Ping', 'content-type': 'application/json' },
      Buffer.from(body),
    );
    expect(h2.status).toBe(415);
    // Native gRPC on the same port is grpc-js's as ever.
    expect((await unary(h.client, 'Ping', { text: 'g' })).response).toEqual({ text: 'pong g' });
  });

  it('answers the gateway over HTTP/1.1 only: over HTTP/2 grpc-js answers 415', async () => {
    h = await startLibrary(GRPC_JS);
    expect((await fetch(`${h.base}/livez`)).status).toBe(200);
    const h2 = await h2Request(h.base, { ':method': 'GET', ':path': '/livez' });
    expect(h2.status).toBe(415);
  });

  it('http2FirstStreamTimeoutMs: closes a connection on which no call started, not one that made a call', async () => {
    h = await startLibrary(`${GRPC_JS}    http2FirstStreamTimeoutMs: 300\n`);
    // The client's connection (made first, so its timer would fire first) has a call on it.
    expect((await unary(h.client, 'Ping', { text: 'x' })).response).toEqual({ text: 'pong x' });
    const silent = await silentHttp2(h.port);
    await waitFor('the connection without a call to be closed', silent.closed, {
      timeoutMs: 10_000,
    });
    // Had the client's connection been closed, this call would open a new one: the same one
    // answers, so its state is still READY (2) before the call, not IDLE or CONNECTING.
    const channel = (
      h.client as unknown as { getChannel(): { getConnectivityState(c: boolean): number } }
    ).getChannel();
    expect(channel.getConnectivityState(false)).toBe(2);
    expect((await unary(h.client, 'Ping', { text: 'y' })).response).toEqual({ text: 'pong y' });
  });
});
