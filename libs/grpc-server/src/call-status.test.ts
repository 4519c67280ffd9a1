import http2 from 'node:http2';
import { Metadata, status } from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

/**
 * One gRPC call over a raw HTTP/2 stream with the request body given as bytes (a grpc-js client
 * cannot send a malformed message): resolves the grpc-status the server sent.
 */
function rawCall(
  port: number,
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ code: number; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.once('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    let code: number | undefined;
    let message = '';
    const take = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] !== undefined) {
        code = Number(h['grpc-status']);
        message = decodeURIComponent(String(h['grpc-message'] ?? ''));
      }
    };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', () => {});
    req.once('error', () => {});
    req.once('close', () => {
      session.close();
      if (code === undefined) reject(new Error(`no grpc-status on ${path} (rst ${req.rstCode})`));
      else resolve({ code, message });
    });
    req.end(body);
  });
}

/** A length-prefixed gRPC message frame: flag byte, 4-byte length, then the bytes. */
function frame(claimedLength: number, bytes: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(claimedLength, 1);
  return Buffer.concat([head, bytes]);
}

/**
 * With `server: grpc-js` (README, "server: grpc-js"), grpc-js's public API tells the middleware
 * of a status grpc-js sends itself, past every interceptor (a message over the size limit, one it
 * cannot decode), only as a cancel: recorded Canceled; its deadline is recorded DeadlineExceeded
 * (the deadline has passed); a call to a method grpc-js does not have never reaches an
 * interceptor and is not recorded. With `server: node` (the default) every call is recorded with
 * the status its client got.
 */
const onGrpcJs = process.env['SVC_GRPC_SERVER'] === 'grpc-js';
function recordedAs(code: string): string | undefined {
  if (!onGrpcJs) return code;
  if (code === 'Unimplemented') return undefined;
  return code === 'ResourceExhausted' || code === 'Internal' ? 'Canceled' : code;
}

describe('every call is recorded with the status its client got', () => {
  let h: Harness;
  const held: Array<() => void> = [];
  let records: Array<Record<string, unknown>> = [];
  const got: Record<string, number> = {};
  /** Counts a call whose client got `code` under the code it is recorded with. */
  const count = (code: string): void => {
    const as = recordedAs(code);
    if (as !== undefined) got[as] = (got[as] ?? 0) + 1;
  };
  let metricsText = '';

  beforeAll(async () => {
    h = await startLibrary('    maxRecvMsgSizeBytes: 1024\n', {
      overrides: {
        // Search never answers until the test lets it go: calls end by deadline or cancel.
        Search: (_call: unknown, cb: (err: null, res: unknown) => void) =>
          held.push(() => cb(null, {})),
      },
    });
  });
  afterAll(async () => {
    for (const release of held) release();
    if (h) await h.stop();
  });

  it('a message claiming 4 GB: ResourceExhausted for the client and in the record', async () => {
    const r = await rawCall(h.port, '/test.v1.Library/Ping', frame(0xffffffff, Buffer.alloc(16)));
    expect(r.code).toBe(status.RESOURCE_EXHAUSTED);
    count('ResourceExhausted');
  });

  it('a message over maxRecvMsgSizeBytes from a grpc-js client: ResourceExhausted', async () => {
    const r = await unary(h.client, 'Ping', { text: 'x'.repeat(4096) });
    expect(r.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    count('ResourceExhausted');
  });

  it('an undecodable message: Internal', async () => {
    // Field 1 with wire type 7, which does not exist.
    const r = await rawCall(
      h.port,
      '/test.v1.Library/Ping',
      frame(3, Buffer.from([0x0f, 0xff, 0xff])),
    );
    expect(r.code).toBe(status.INTERNAL);
    count('Internal');
  });

  it('an unknown method: Unimplemented, with the path asked for in the record', async () => {
    const r = await rawCall(h.port, '/test.v1.Library/NoSuchMethod', frame(0, Buffer.alloc(0)));
    expect(r.code).toBe(status.UNIMPLEMENTED);
    count('Unimplemented');
  });

  it('a deadline that passes: DeadlineExceeded', async () => {
    // Only the server keeps this deadline (a grpc-timeout header, no client timer): a grpc-js
    // client's own deadline resets the stream when it passes, and on a loaded machine that reset
    // could reach the server before the server's timer fired, making the call Canceled there.
    const before = held.length;
    const r = await rawCall(h.port, '/test.v1.Library/Search', frame(0, Buffer.alloc(0)), {
      'grpc-timeout': '1S',
    });
    expect(held.length, 'the call reached the handler before its deadline').toBeGreaterThan(before);
    expect(r.code).toBe(status.DEADLINE_EXCEEDED);
    count('DeadlineExceeded');
  });

  it('a call the client cancels: Canceled', async () => {
    const before = held.length;
    const call = h.client['Search']!({ query: 'cancelled' }, new Metadata(), () => {}) as {
      cancel(): void;
    };
    await waitFor('the call to reach the handler', () => held.length > before, {
      timeoutMs: 10_000,
    });
    call.cancel();
    count('Canceled');
  });

  it('an ordinary call still says OK', async () => {
    const r = await unary(h.client, 'Ping', { text: 'hi' });
    expect(r.error).toBeUndefined();
    count('OK');
  });

  it('the metrics count the same codes', async () => {
    // The cancelled call is recorded once grpc-js sees the stream reset.
    await waitFor(
      'every call to be counted',
      async () => {
        metricsText = await (await fetch(`${h.base}/metrics`)).text();
        const canceled = metricsText.matchAll(
          /^grpc_server_handled_total\{[^}]*grpc_code="Canceled"[^}]*\} (\d+)/gm,
        );
        return [...canceled].reduce((n, m) => n + Number(m[1]), 0) === got['Canceled'];
      },
      { timeoutMs: 30_000 },
    );
    for (const [code, n] of Object.entries(got)) {
      const handled = [
        ...metricsText.matchAll(
          new RegExp(`^grpc_server_handled_total\\{[^}]*grpc_code="${code}"[^}]*\\} (\\d+)`, 'gm'),
        ),
      ];
      const resCodes = [
        ...metricsText.matchAll(
          new RegExp(`^svc_call_res_code_total\\{[^}]*res_code="${code}"[^}]*\\} (\\d+)`, 'gm'),
        ),
      ];
      const sum = (ms: RegExpMatchArray[]): number => ms.reduce((a, m) => a + Number(m[1]), 0);
      expect(sum(handled), `grpc_server_handled_total ${code}`).toBe(n);
      expect(sum(resCodes), `svc_call_res_code_total ${code}`).toBe(n);
    }
    // No call was counted with a code its client did not get.
    for (const wrong of ['Unknown', 'Unavailable'])
      expect(metricsText).not.toMatch(new RegExp(`grpc_code="${wrong}"`));
    if (onGrpcJs) expect(metricsText).not.toMatch(/grpc_code="Unimplemented"/);
    else
      expect(metricsText).toMatch(
        /grpc_server_handled_total\{[^}]*grpc_method="unknown"[^}]*grpc_code="Unimplemented"[^}]*\} 1/,
      );
  });

  it('and so do the records', async () => {
    for (const release of held.splice(0)) release();
    records = await h.stop();
    h = undefined as unknown as Harness;
    const payloads = (r: Record<string, unknown>): Record<string, unknown> =>
      (r['payloads'] ?? {}) as Record<string, unknown>;
    const calls = records.filter((r) => payloads(r)['apiProtocol'] === 'HTTP/2');
    const withCode = (code: string): number => calls.filter((r) => r['resCode'] === code).length;
    for (const [code, n] of Object.entries(got))
      expect(withCode(code), `records with resCode ${code}`).toBe(n);
    expect(calls.length).toBe(Object.values(got).reduce((a, b) => a + b, 0));
    if (onGrpcJs) return;
    const unknown = calls.find((r) => r['resCode'] === 'Unimplemented');
    expect(payloads(unknown ?? {})['apiPath']).toBe('/test.v1.Library/NoSuchMethod');
  });
});
