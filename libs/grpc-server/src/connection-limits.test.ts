import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { waitFor, writeSelfSignedCert } from '@svcboot/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import {
  AUTO_MAX_CONNECTIONS_CAP,
  effectiveMaxConnections,
  openFileLimit,
  RefusedConnections,
} from './connection-limits.js';
import { HEALTH_RESERVE } from './one-port.js';
import { startLibrary, type Harness } from './test-support/harness.js';

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
/** An empty SETTINGS frame: a client that has started HTTP/2 and then does nothing. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

const sockets: Array<net.Socket | tls.TLSSocket> = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

/** A connection that sends the HTTP/2 preface and SETTINGS, then nothing. */
function idleHttp2(port: number): Promise<{ socket: net.Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(PREFACE);
      socket.write(SETTINGS);
      resolve({ socket, closed: () => closed });
    });
    socket.on('close', () => (closed = true));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    sockets.push(socket);
  });
}

function get(
  port: number,
  path: string,
): Promise<{ status: number; connection: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: String(res.headers.connection ?? ''),
            body,
          }),
        );
      })
      .once('error', reject);
  });
}

describe('maxConnections: a connection flood at a lowered limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    maxConnections: 20\n');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('refuses connections past the limit at once, still answers health checks, counts and warns', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => idleHttp2(h.port)));
    await waitFor('the 20 connections to be taken', async () => {
      // The listener has them all once a later connection is past the limit: health only.
      const r = await get(h.port, '/v1/shelves/s1');
      return r.status === 503 && r.connection === 'close';
    });
    // Health checks are still answered at the limit (and their connections closed after).
    const live = await get(h.port, '/livez');
    expect(live.status).toBe(200);
    expect(live.connection).toBe('close');
    expect((await get(h.port, '/readyz')).status).toBe(200);
    // HTTP/2 past the limit: closed at once.
    const extra = await idleHttp2(h.port);
    await waitFor('the connection over the limit to be closed', extra.closed, {
      timeoutMs: 10_000,
    });
    const refusedCount = async (): Promise<number> =>
      Number(
        /svc_connections_refused_total\{entry_name="lib"\} (\d+)/.exec(
          await h.entry.registry.metrics(),
        )?.[1] ?? 0,
      );
    await waitFor('the refusal to be counted', async () => (await refusedCount()) >= 1);
    // Past the health reserve too (filled by connections that have sent nothing yet): a new
    // connection is closed as soon as it is accepted, health check or not.
    const silent = await Promise.all(
      Array.from(
        { length: HEALTH_RESERVE },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(h.port, '127.0.0.1', () => resolve(s));
            s.on('error', () => undefined);
            sockets.push(s);
          }),
      ),
    );
    await expect(get(h.port, '/livez')).rejects.toThrow();
    await waitFor('the second refusal to be counted', async () => (await refusedCount()) >= 2);
    expect(held.every((c) => !c.closed())).toBe(true);
    // Once the flood ends, new connections are served again.
    for (const c of held) c.socket.destroy();
    for (const s of silent) s.destroy();
    await waitFor(
      'the gateway to answer again',
      async () => (await get(h.port, '/v1/shelves/s1')).status === 200,
      { timeoutMs: 10_000 },
    );
  });
});

describe('HTTP/2 connections that open no stream', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary('    http2FirstStreamTimeoutMs: 300\n');
  });
  afterAll(async () => {
    await h.stop();
  });

  it('are closed after http2FirstStreamTimeoutMs (preface and SETTINGS only); calls still work', async () => {
    const idle = await idleHttp2(h.port);
    await waitFor('the connection without a stream to be closed', idle.closed, {
      timeoutMs: 10_000,
    });
    // Clients that do make calls are served.
    const client = h.client as unknown as {
      Ping(req: unknown, cb: (e: Error | null, r: { text: string }) => void): void;
    };
    const ping = (): Promise<string> =>
      new Promise((resolve, reject) =>
        client.Ping({ text: 'x' }, (e, r) => (e ? reject(e) : resolve(r.text))),
      );
    expect(await ping()).toBe('pong x');
    expect(await ping()).toBe('pong x');
  });
});

describe('keepalive pings', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startLibrary(
      '    keepaliveTimeMs: 200\n    keepaliveTimeoutMs: 200\n    http2FirstStreamTimeoutMs: 0\n',
    );
  });
  afterAll(async () => {
    await h.stop();
  });

  it('close an HTTP/2 connection whose peer does not acknowledge them', async () => {
    // A "client" that never answers a PING (it reads nothing as HTTP/2), as a vanished peer.
    const silent = await idleHttp2(h.port);
    await waitFor('the connection to be closed after an unanswered keepalive PING', silent.closed, {
      timeoutMs: 10_000,
    });
  });
});

describe('the automatic maxConnections', () => {
  it('is 80 % of the open-file limit, at most 10,000', () => {
    expect(
      openFileLimit(
        'Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                20000                files\n',
      ),
    ).toBe(20_000);
    expect(effectiveMaxConnections(0, 1024)).toBe(819);
    expect(effectiveMaxConnections(0, 20_000)).toBe(AUTO_MAX_CONNECTIONS_CAP);
    expect(effectiveMaxConnections(0, undefined)).toBe(AUTO_MAX_CONNECTIONS_CAP);
    expect(effectiveMaxConnections(50, 1024)).toBe(50);
  });
});

describe('RefusedConnections', () => {
  it('counts every refusal and warns at most once per interval, with the count since the last warning', () => {
    const warnings: string[] = [];
    const registry = new Registry();
    const r = new RefusedConnections(registry, 'lib', 20, (m) => warnings.push(m), 60_000);
    r.refused(1_000);
    r.refused(2_000);
    r.refused(3_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^1 new connection\(s\) refused: maxConnections \(20\)/);
    r.refused(61_000);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/^3 new connection/);
  });
});

describe('maxConnections with TLS: health checks still answered at the limit', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-tls-limit-'));
    const { key, cert } = writeSelfSignedCert(dir);
    h = await startLibrary(
      `    maxConnections: 10\n    tls:\n      certFile: "${cert}"\n      keyFile: "${key}"\n`,
    );
  });
  afterAll(async () => {
    await h.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A TLS connection that negotiated HTTP/2 (ALPN h2) and then sends nothing. */
  function idleTlsHttp2(): Promise<tls.TLSSocket> {
    return new Promise((resolve, reject) => {
      const s = tls.connect(
        { host: '127.0.0.1', port: h.port, rejectUnauthorized: false, ALPNProtocols: ['h2'] },
        () => resolve(s),
      );
      s.once('error', reject);
      s.on('error', () => undefined);
      s.on('data', () => undefined);
      sockets.push(s);
    });
  }

  function tlsGet(p: string): Promise<{ status: number; connection: string }> {
    return new Promise((resolve, reject) => {
      https
        .get(
          { host: '127.0.0.1', port: h.port, path: p, agent: false, rejectUnauthorized: false },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                connection: String(res.headers.connection ?? ''),
              }),
            );
          },
        )
        .once('error', reject);
    });
  }

  it('answers /livez and /readyz over TLS on connections past the limit, refuses the rest', async () => {
    const held = await Promise.all(Array.from({ length: 10 }, () => idleTlsHttp2()));
    await waitFor('the limit to be reached', async () => {
      const r = await tlsGet('/v1/shelves/s1');
      return r.status === 503 && r.connection === 'close';
    });
    expect(await tlsGet('/livez')).toEqual({ status: 200, connection: 'close' });
    expect(await tlsGet('/readyz')).toEqual({ status: 200, connection: 'close' });
    // HTTP/2 over TLS past the limit: closed.
    const extra = await idleTlsHttp2();
    await waitFor(
      'the TLS HTTP/2 connection over the limit to be closed',
      () => extra.destroyed || extra.readyState === 'closed',
      {
        timeoutMs: 10_000,
      },
    );
    for (const s of held) s.destroy();
    await waitFor(
      'the gateway to answer again',
      async () => (await tlsGet('/v1/shelves/s1')).status === 200,
      { timeoutMs: 10_000 },
    );
  });
});
