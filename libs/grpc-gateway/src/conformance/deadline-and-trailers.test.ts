import { ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aborted, request, startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 points 9 (deadlines) and 4 (trailers).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('deadlines (runtime/context.go)', () => {
  it('examples/internal/integration TestTimeout: Grpc-Timeout 10m on a slower handler → 504, code 4', async () => {
    const r = await request(c, 'GET', '/v1/slow?wait=60000', undefined, { 'grpc-timeout': '10m' });
    expect(r.status).toBe(504);
    expect(r.json).toEqual({ code: 4, message: 'context deadline exceeded', details: [] });
  });

  // Its own case, with a deadline the handler surely starts within: on a loaded machine 10 ms can
  // pass before the handler starts (then nothing runs to see the abort; the answer is the same).
  it('a handler running when its deadline passes sees the deadline and an aborted signal', async () => {
    const before = Date.now();
    const r = await request(c, 'GET', '/v1/slow?wait=60000', undefined, { 'grpc-timeout': '1S' });
    expect(r.status).toBe(504);
    expect(r.json).toEqual({ code: 4, message: 'context deadline exceeded', details: [] });
    // This call's abort is the one with its deadline: an earlier call's handler (the 10 ms one
    // above, started late on a loaded machine, or another file's cancelled call) can report its
    // own abort meanwhile, with another reason.
    const ours = () => aborted.find((a) => Number(a.deadline) >= before + 1000);
    await until('the handler to see the abort', () => ours() !== undefined);
    expect(ours()!.reason).toBe('deadline exceeded');
  });

  it('examples/internal/integration TestInvalidTimeout: an invalid Grpc-Timeout → 400, code 3', async () => {
    for (const v of ['INVALID', '10', '1x', 'm']) {
      const r = await request(c, 'GET', '/v1/slow', undefined, { 'grpc-timeout': v });
      expect(r.status, v).toBe(400);
      expect(r.json, v).toEqual({ code: 3, message: `invalid grpc-timeout: ${v}`, details: [] });
    }
  });

  it('runtime/context.go timeoutDecode: units H M S m u n; a call within its deadline answers and sees it (call.getDeadline())', async () => {
    const before = Date.now();
    const r = await request(c, 'GET', '/v1/slow', undefined, { 'grpc-timeout': '1H' });
    expect(r.status).toBe(200);
    const deadline = Number((r.json as { deadline: string }).deadline);
    expect(deadline).toBeGreaterThanOrEqual(before + 3_600_000);
    const none = await request(c, 'GET', '/v1/slow');
    expect(none.json).toEqual({});
  });

  it('runtime/handler.go ForwardResponseStream: a stream past its deadline ends with an {"error"} line, code 4', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=100000&wait=20', undefined, {
      'grpc-timeout': '300m',
    });
    expect(r.status).toBe(200);
    const lines = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({
      error: { code: 4, message: 'context deadline exceeded', details: [] },
    });
    expect(lines.slice(0, -1).every((l) => 'result' in l)).toBe(true);
  });
});

const failing = {
  code: 5,
  message: 'not found',
  header: { uuid: 'u1' },
  trailer: { foo: 'foo2', bar: 'bar2' },
};

describe('trailers (runtime/handler.go, runtime/errors.go)', () => {
  it('examples/internal/integration testABELookupNotFound (useTrailers): with TE: trailers, trailer metadata as HTTP trailers Grpc-Trailer-<key>', async () => {
    const r = await request(c, 'POST', '/v1/fail', JSON.stringify(failing), { te: 'trailers' });
    expect(r.status).toBe(404);
    expect(r.headers['grpc-metadata-uuid']).toBe('u1');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.trailers).toMatchObject({ 'grpc-trailer-foo': 'foo2', 'grpc-trailer-bar': 'bar2' });
    expect(r.headers['grpc-trailer-foo']).toBeUndefined();
  });

  it('examples/internal/integration testABELookupNotFound: without TE: trailers no trailer metadata is sent', async () => {
    const r = await request(c, 'POST', '/v1/fail', JSON.stringify(failing));
    expect(r.status).toBe(404);
    expect(r.trailers).toEqual({});
    expect(r.headers['grpc-trailer-foo']).toBeUndefined();
  });

  it('runtime/handler.go ForwardResponseMessage: a success with trailer metadata and TE: trailers', async () => {
    const r = await request(
      c,
      'POST',
      '/v1/fail',
      JSON.stringify({ code: 0, trailer: { foo: 'f' } }),
      { te: 'trailers' },
    );
    expect(r.status).toBe(200);
    expect(r.json).toEqual({});
    expect(r.trailers).toMatchObject({ 'grpc-trailer-foo': 'f' });
  });

  it('svc style: header and trailer metadata with the same key never overwrite each other', async () => {
    const d = await startConformance('    enableSvcGwOption: true\n');
    try {
      const body = JSON.stringify({ code: 0, header: { k: 'h' }, trailer: { k: 't', only: 'o' } });
      const plain = await request(d, 'POST', '/v1/fail', body);
      expect(plain.headers['k']).toBe('h');
      expect(plain.headers['only']).toBe('o');
      const te = await request(d, 'POST', '/v1/fail', body, { te: 'trailers' });
      expect(te.headers['k']).toBe('h');
      expect(te.trailers).toMatchObject({ 'grpc-trailer-k': 't', 'grpc-trailer-only': 'o' });
    } finally {
      await d.stop();
    }
  });
});

describe('svc style (enableSvcGwOption): rk-grpc boot/gw_server_options.go NewRkGwServerMuxOptions', () => {
  let d: Conformance;
  beforeAll(async () => {
    d = await startConformance('    enableSvcGwOption: true\n');
  });
  afterAll(async () => {
    await d.stop();
  });

  it('HttpErrorHandler with TE: trailers: trailer metadata as HTTP trailers Grpc-Trailer-<key> (runtime.MetadataTrailerPrefix), header metadata as plain headers', async () => {
    const r = await request(d, 'POST', '/v1/fail', JSON.stringify(failing), { te: 'trailers' });
    expect(r.status).toBe(404);
    expect(r.headers['uuid']).toBe('u1');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.trailers).toEqual({ 'grpc-trailer-foo': 'foo2', 'grpc-trailer-bar': 'bar2' });
    expect(r.json).toEqual({ code: 5, message: 'not found', details: [] });
  });

  it('ForwardResponseMessage with TE: trailers (the default outgoing trailer matcher): Grpc-Trailer-<key>', async () => {
    const body = JSON.stringify({ code: 0, trailer: { foo: 'f' } });
    const r = await request(d, 'POST', '/v1/fail', body, { te: 'trailers' });
    expect(r.status).toBe(200);
    expect(r.trailers).toEqual({ 'grpc-trailer-foo': 'f' });
  });

  it("client-streaming-request-func: the handler's status is the answer (FailedPrecondition → 400), whether it fails at once or at the end of the stream", async () => {
    const late = await request(d, 'POST', '/v1/collect', '{"name":"a"}\n{"name":"fail"}');
    expect(late.status).toBe(400);
    expect(late.json).toEqual({ code: 9, message: 'asked to fail', details: [] });
    const early = await request(d, 'POST', '/v1/collect', '{"name":"fail-now"}\n{"name":"b"}');
    expect(early.status).toBe(400);
    expect(early.json).toEqual({ code: 9, message: 'asked to fail now', details: [] });
    const te = await request(d, 'POST', '/v1/collect', '{"name":"fail"}', { te: 'trailers' });
    expect(te.status).toBe(400);
    expect(te.json).toEqual({ code: 9, message: 'asked to fail', details: [] });
  });

  it("client-streaming-request-func through user interceptors: the handler's status is the answer", async () => {
    const pass: ServerInterceptor = (_method, call) => new ServerInterceptingCall(call);
    const withInterceptor = await startConformance('    enableSvcGwOption: true\n', (e) =>
      e.addInterceptor(pass),
    );
    try {
      const late = await request(withInterceptor, 'POST', '/v1/collect', '{"name":"fail"}');
      expect(late.status).toBe(400);
      expect(late.json).toEqual({ code: 9, message: 'asked to fail', details: [] });
      const early = await request(
        withInterceptor,
        'POST',
        '/v1/collect',
        '{"name":"fail-now"}\n{"name":"b"}',
      );
      expect(early.status).toBe(400);
      const ok = await request(withInterceptor, 'POST', '/v1/collect', '{"name":"a"}');
      expect(ok.status).toBe(200);
      expect((ok.json as { nesteds: unknown[] }).nesteds).toEqual([
        { name: 'a', amount: 0, child: null, color: 'COLOR_UNSPECIFIED' },
      ]);
    } finally {
      await withInterceptor.stop();
    }
  });
});
