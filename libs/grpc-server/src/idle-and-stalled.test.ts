import { mkdtemp, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor, writeSelfSignedCert } from '@svcboot/testkit';
import { grpcSchema } from './schema.js';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop().catch(() => undefined);
});

/** A raw HTTP/2 client, to send what grpc-js clients never would. */
function connect(port: number): { session: http2.ClientHttp2Session; events: string[] } {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const events: string[] = [];
  session.on('error', () => undefined);
  session.once('goaway', () => events.push('goaway'));
  session.once('close', () => events.push('close'));
  return { session, events };
}

/** A gRPC frame header announcing `length` bytes of message. */
function frameHeader(length: number): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(length, 1);
  return b;
}

function metric(text: string, family: string, label: string, code: string): number {
  const re = new RegExp(`^${family}\\{[^}]*${label}="${code}"[^}]*\\} (\\d+)`, 'gm');
  return [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('defaults (issue 18, point 1)', () => {
  it('closes idle HTTP/2 connections after 5 minutes and half-sent requests after 30 s', () => {
    const c = grpcSchema.parse({ name: 'x', port: 1 });
    expect(c.connectionIdleTimeoutMs).toBe(300_000);
    expect(c.requestMessageTimeoutMs).toBe(30_000);
  });
});

describe('connectionIdleTimeoutMs: HTTP/2 connections whose streams have all ended', () => {
  it('closes a connection idle since its last call (GOAWAY first), not one with a call still open', async () => {
    let release: (() => void) | undefined;
    const h = await startLibrary(
      '    connectionIdleTimeoutMs: 400\n    http2FirstStreamTimeoutMs: 0\n',
      {
        overrides: {
          Ping: (call: { request: Record<string, unknown> }, cb: (e: null, r: unknown) => void) => {
            if (call.request['text'] === 'hold') release = () => cb(null, { text: 'released' });
            else cb(null, { text: `pong ${String(call.request['text'])}` });
          },
        },
      },
    );
    harnesses.push(h);
    // The busy connection: a call held open by the server until the idle one is closed.
    const held = unary(h.client, 'Ping', { text: 'hold' });
    await waitFor('the server to hold the call', () => release !== undefined);

    // The idle connection: one call, then nothing.
    const idle = connect(h.port);
    const answered = await new Promise<string>((resolve, reject) => {
      const req = idle.session.request({
        ':method': 'POST',
        ':path': '/test.v1.Library/Ping',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      req.on('trailers', (t) => resolve(String(t['grpc-status'])));
      req.on('error', reject);
      req.on('data', () => undefined);
      req.end(Buffer.concat([frameHeader(0)]));
    });
    expect(answered).toBe('0');
    await waitFor('the idle connection to be closed', () => idle.events.includes('close'), {
      timeoutMs: 10_000,
    });
    expect(idle.events).toEqual(['goaway', 'close']);
    // The connection with a call in progress was not touched: the call completes on it.
    release!();
    expect((await held).response).toEqual({ text: 'released' });
  });
});

describe('connectionIdleTimeoutMs with TLS', () => {
  it('closes an idle HTTP/2 connection over TLS (ALPN h2) too', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-idle-tls-'));
    try {
      const { key, cert } = writeSelfSignedCert(dir);
      const h = await startLibrary(
        `    connectionIdleTimeoutMs: 400\n    http2FirstStreamTimeoutMs: 0\n    tls:\n      certFile: "${cert}"\n      keyFile: "${key}"\n`,
      );
      harnesses.push(h);
      const session = http2.connect(`https://127.0.0.1:${h.port}`, { rejectUnauthorized: false });
      const events: string[] = [];
      session.on('error', () => undefined);
      session.once('goaway', () => events.push('goaway'));
      session.once('close', () => events.push('close'));
      const status = await new Promise<string>((resolve, reject) => {
        const req = session.request({
          ':method': 'POST',
          ':path': '/test.v1.Library/Ping',
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        req.on('trailers', (t) => resolve(String(t['grpc-status'])));
        req.on('error', reject);
        req.on('data', () => undefined);
        req.end(frameHeader(0));
      });
      expect(status).toBe('0');
      await waitFor('the idle TLS connection to be closed', () => events.includes('close'), {
        timeoutMs: 10_000,
      });
      expect(events).toEqual(['goaway', 'close']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('requestMessageTimeoutMs: a request message half sent, then nothing', () => {
  it('ends the call with DEADLINE_EXCEEDED and a clear message; the record and the metrics say the same', async () => {
    const h = await startLibrary('    requestMessageTimeoutMs: 300\n');
    harnesses.push(h);
    const { session } = connect(h.port);
    const req = session.request({
      ':method': 'POST',
      ':path': '/test.v1.Library/Ping',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    req.on('data', () => undefined);
    req.on('error', () => undefined);
    const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => {
      req.on('response', (headers) => {
        // A trailers-only response carries the status in its headers.
        if (headers['grpc-status'] !== undefined) resolve(headers);
      });
      req.on('trailers', (t) => resolve(t));
    });
    // 10 bytes announced, 3 sent, and the stream left open.
    req.write(Buffer.concat([frameHeader(10), Buffer.from([0x0a, 0x08, 0x68])]));
    const streamClosed = new Promise<number>((resolve) =>
      req.on('close', () => resolve(req.rstCode ?? -1)),
    );
    const status = await trailers;
    expect(status['grpc-status']).toBe('4');
    // The server ends the stream too (RST_STREAM NO_ERROR), not only its half. With
    // `server: grpc-js` it cannot (README, "server: grpc-js"): the client closes it.
    if (process.env['SVC_GRPC_SERVER'] === 'grpc-js') req.close();
    else expect(await streamClosed).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect(decodeURIComponent(String(status['grpc-message']))).toMatch(
      /^the request message was not complete within 300 ms of the call's start \(requestMessageTimeoutMs\)$/,
    );
    // A call that sends its request is served as before.
    expect((await unary(h.client, 'Ping', { text: 'x' })).response).toEqual({ text: 'pong x' });
    const metrics = await h.entry.registry.metrics();
    expect(metric(metrics, 'grpc_server_handled_total', 'grpc_code', 'DeadlineExceeded')).toBe(1);
    expect(metric(metrics, 'svc_call_res_code_total', 'res_code', 'DeadlineExceeded')).toBe(1);
    session.close();
    const records = await h.stop();
    harnesses.length = 0;
    const pings = records.filter((r) => String(r['operation']).endsWith('/Ping'));
    expect(pings.map((r) => [r['resCode'], r['error']])).toEqual([
      [
        'DeadlineExceeded',
        expect.stringMatching(/^the request message was not complete within 300 ms/),
      ],
      ['OK', undefined],
    ]);
  });

  it('does not time a client-streaming call that pauses between messages', async () => {
    const h = await startLibrary('    requestMessageTimeoutMs: 200\n');
    harnesses.push(h);
    const client = h.client as unknown as {
      Collect(cb: (e: Error | null, r: { hits: string[] }) => void): {
        write(m: unknown): void;
        end(): void;
      };
    };
    const result = new Promise<{ hits: string[] }>((resolve, reject) => {
      const call = client.Collect((e, r) => (e ? reject(e) : resolve(r)));
      call.write({ title: 'a' });
      // Longer than the timeout between two whole messages: a pause, not a stall.
      setTimeout(() => {
        call.write({ title: 'b' });
        call.end();
      }, 600);
    });
    expect((await result).hits).toEqual(['a', 'b']);
  });
});
