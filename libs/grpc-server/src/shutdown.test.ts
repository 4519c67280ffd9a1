import http2 from 'node:http2';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  plainEnv,
  sigtermUnderKeepAliveLoad,
  sigtermUnderSharedAgentLoad,
  startOnFreePort,
  waitFor,
} from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** test.v1.PingRequest{text: "held"} in a gRPC frame, split: the call stays open until the tail is sent. */
/** The first GOAWAY of a two-phase drain names the largest stream id. */
const LARGEST_STREAM_ID = 2 ** 31 - 1;

const PING = Buffer.concat([Buffer.from([0, 0, 0, 0, 6, 0x0a, 4]), Buffer.from('held')]);

describe('grpc entry: SIGTERM under keep-alive gateway load, with the defaults', () => {
  it('loses no gateway request on 8 keep-alive connections, drains HTTP/2 with GOAWAY (two-phase on server: node) naming the last stream taken and completes that call, and exits 0', async () => {
    const { child, port } = await startOnFreePort((port) => {
      const child = Child.start(
        process.execPath,
        [
          '--conditions=svcboot-source',
          '--import',
          'tsx',
          path.join(here, 'test-support/sigterm-app.ts'),
        ],
        {
          cwd: path.join(here, '..'),
          env: plainEnv({ PORT: String(port) }),
        },
      );
      cleanups.push(() => child.kill());
      return child;
    });

    // A gRPC call held open across the signal: headers and half its message sent; a PING's ACK
    // (sent after them) says the server has taken the stream.
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    cleanups.push(() => session.destroy());
    // The GOAWAYs the server sent on the held call's connection, in order, and the PINGs it
    // sent before the one naming the last stream. (Node emits a frame's 'ping' at once and its
    // 'goaway' a tick later: a PING read with a GOAWAY may be heard first, so the PING is only
    // placed against the final GOAWAY, which the server sends a round trip after its PING.)
    const goaways: string[] = [];
    let pingsBeforeFinal = 0;
    /** The GOAWAY that names the last stream taken (not 2^31-1, the first of a two-phase drain). */
    let goaway: { code: number; lastStreamID: number } | undefined;
    session.on('goaway', (code, lastStreamID) => {
      goaways.push(`${code} ${lastStreamID === LARGEST_STREAM_ID ? '2^31-1' : 'last'}`);
      if (lastStreamID !== LARGEST_STREAM_ID) goaway ??= { code, lastStreamID };
    });
    const held = session.request({
      ':method': 'POST',
      ':path': '/test.v1.Library/Ping',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    held.on('trailers', (t) => (trailers = t));
    held.on('data', (c: Buffer) => chunks.push(c));
    const heldClosed = new Promise<number>((resolve) =>
      held.on('close', () => resolve(held.rstCode ?? 0)),
    );
    held.on('error', () => undefined);
    await new Promise<void>((resolve, reject) =>
      held.write(PING.subarray(0, 6), (err) => (err ? reject(err) : resolve())),
    );
    await new Promise<void>((resolve, reject) =>
      session.ping((err) => (err ? reject(err) : resolve())),
    );
    session.on('ping', () => {
      if (goaway === undefined) pingsBeforeFinal++;
    });

    const r = await sigtermUnderKeepAliveLoad(child, {
      port,
      path: '/v1/shelves/s1',
      connections: 8,
      // Once the entry stops (after the drain delay), the held call's connection gets the GOAWAY
      // naming its stream; the call then completes.
      beforeExit: async () => {
        await waitFor("GOAWAY on the held call's connection", () => goaway !== undefined, {
          timeoutMs: 20_000,
        });
        held.end(PING.subarray(6));
        await heldClosed;
      },
    });
    const summary = JSON.stringify({
      failures: r.failures.slice(0, 10),
      readiness: r.readiness,
      stdout: child.stdout.slice(-1500),
    });
    expect(r.failures, summary).toEqual([]);
    expect(r.readiness, summary).toBe(503);
    for (let w = 0; w < 8; w++) {
      const after = r.outcomes.filter((o) => o.worker === w && o.answeredAfterSignal === true);
      expect(after.length, `worker ${w}: ${summary}`).toBeGreaterThan(0);
      expect(after.at(-1)?.connection, `worker ${w}`).toBe('close');
    }
    expect(r.exitCode, summary).toBe(0);

    // The held call's connection got GOAWAY naming its stream (the last the server took), and the call completed.
    expect(goaway, summary).toEqual({
      code: http2.constants.NGHTTP2_NO_ERROR,
      lastStreamID: held.id,
    });
    // server: node drains in two phases (GOAWAY 2^31-1 and a PING, then, at the PING's ACK, the
    // real GOAWAY, as gRPC's C-core and Go servers do); grpc-js's tryShutdown sends one GOAWAY.
    const NO_ERROR = http2.constants.NGHTTP2_NO_ERROR;
    const onGrpcJs = process.env['SVC_GRPC_SERVER'] === 'grpc-js';
    // Node 26's session.close() sends a GOAWAY of its own after the entry's final one, naming the
    // same last stream (RFC 9113 §6.8 allows repeats that do not raise it): one or more here.
    if (onGrpcJs) expect(goaways, summary).toEqual([`${NO_ERROR} last`]);
    else {
      expect(goaways[0], summary).toBe(`${NO_ERROR} 2^31-1`);
      expect(goaways.length, summary).toBeGreaterThanOrEqual(2);
      expect(new Set(goaways.slice(1)), summary).toEqual(new Set([`${NO_ERROR} last`]));
    }
    expect(pingsBeforeFinal, summary).toBe(onGrpcJs ? 0 : 1);
    expect(await heldClosed).toBe(0);
    expect(trailers['grpc-status']).toBe('0');
    expect(Buffer.concat(chunks).toString('latin1')).toContain('pong held');
  });
});

describe('grpc entry (gateway): SIGTERM under one keep-alive http.Agent (8 sockets, 16 looping GETs), with the defaults', () => {
  it('loses no request: the client is refused only once the app stops listening, no request it sent is reset, and the app exits 0', async () => {
    const { child, port } = await startOnFreePort((port) => {
      const child = Child.startSource(path.join(here, 'test-support/sigterm-app.ts'), {
        cwd: path.join(here, '..'),
        env: plainEnv({ PORT: String(port) }),
      });
      cleanups.push(() => child.kill());
      return child;
    });
    // The client goes on through the drain (no load balancer takes the app out): each response
    // that says Connection: close makes it open a new connection, up to the listener's close,
    // which resets every connection the kernel had completed for it (7 per run on main).
    const r = await sigtermUnderSharedAgentLoad(child, {
      port,
      path: '/v1/shelves/s1',
      maxSockets: 8,
    });
    const summary = JSON.stringify({
      ...r,
      lost: r.lost.slice(0, 10),
      stdout: child.stdout.slice(-1500),
    });
    expect(r.lost, summary).toEqual([]);
    expect(r.closedAfterSignal, summary).toBeGreaterThan(0);
    expect(r.exitCode, summary).toBe(0);
  });
});
