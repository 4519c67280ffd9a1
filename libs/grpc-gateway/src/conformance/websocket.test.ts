import { ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 point 3: the WebSocket binding of bidi-streaming rules (an svcboot addition: grpc-gateway
// has none built in; its users put tmc/grpc-websocket-proxy in front, which also sends one JSON
// message per frame, for server streams too). An upgrade on the rule's path is one call; server
// streaming rules answer upgrades too since session 10.

interface Session {
  frames: unknown[];
  closed: Promise<{ code: number; reason: string }>;
  ws: WebSocket;
}

function connect(
  c: Conformance,
  path: string,
  headers: Record<string, string> = {},
): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${c.port}${path}`, { headers });
    const frames: unknown[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data)) as unknown));
    const closed = new Promise<{ code: number; reason: string }>((res) =>
      ws.once('close', (code, reason) => res({ code, reason: reason.toString() })),
    );
    ws.once('open', () => resolve({ frames, closed, ws }));
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`upgrade refused: ${res.statusCode}`)),
    );
    ws.once('error', reject);
  });
}

let c: Conformance;
const seen: string[] = [];
beforeAll(async () => {
  const interceptor: ServerInterceptor = (desc, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        seen.push(desc.path);
        next();
      },
    });
  c = await startConformance('', (entry) => entry.addInterceptor(interceptor));
});
afterAll(async () => {
  await c.stop();
});

describe('WebSocket binding of bidi-streaming rules', () => {
  it('answers each frame as it arrives, one JSON message per frame; an empty frame ends the requests and the call closes with 1000', async () => {
    const s = await connect(c, '/v1/chat');
    s.ws.send(JSON.stringify({ name: 'a' }));
    // Answered before the next request is sent: the stream is live, not collected.
    await waitFor('the first answer', () => (s.frames.length === 1 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(s.frames).toEqual([{ name: 'a', amount: 1 }]);
    s.ws.send(JSON.stringify({ name: 'b', amount: 2, color: 'GREEN' }));
    s.ws.send('');
    const closed = await s.closed;
    expect(closed.code).toBe(1000);
    expect(s.frames).toEqual([
      { name: 'a', amount: 1 },
      { name: 'b', amount: 3, color: 'GREEN' },
    ]);
    expect(seen).toContain('/conformance.v1.Conformance/Chat');
  });

  it('a handler error sends {"error": google.rpc.Status} as the last frame and closes with 1011', async () => {
    const s = await connect(c, '/v1/chat');
    s.ws.send(JSON.stringify({ name: 'ok' }));
    s.ws.send(JSON.stringify({ name: 'fail now' }));
    const closed = await s.closed;
    expect(closed).toEqual({ code: 1011, reason: 'code 9: asked to fail' });
    expect(s.frames).toEqual([
      { name: 'ok', amount: 1 },
      { error: { code: 9, message: 'asked to fail', details: [] } },
    ]);
  });

  it('bidi-streaming-request-func: a frame that does not decode ends the requests only; answers so far stand', async () => {
    const s = await connect(c, '/v1/chat');
    s.ws.send(JSON.stringify({ name: 'a' }));
    s.ws.send(JSON.stringify({ name: 'b', color: 'BLUE' }));
    const closed = await s.closed;
    expect(closed.code).toBe(1000);
    expect(s.frames).toEqual([{ name: 'a', amount: 1 }]);
  });

  it('open calls are closed with 1001 (going away) at shutdown', async () => {
    const other = await startConformance();
    let stopped = false;
    try {
      const s = await connect(other, '/v1/chat');
      s.ws.send(JSON.stringify({ name: 'a' }));
      await waitFor('the first answer', () => (s.frames.length === 1 ? true : undefined), {
        timeoutMs: 10_000,
      });
      await other.stop();
      stopped = true;
      expect((await s.closed).code).toBe(1001);
    } finally {
      if (!stopped) await other.stop();
    }
  });

  it('a frame over maxRecvMsgSizeBytes closes the call with 1009 and the entry goes on', async () => {
    const small = await startConformance('    maxRecvMsgSizeBytes: 1024\n');
    try {
      const s = await connect(small, '/v1/chat');
      s.ws.send(JSON.stringify({ name: 'x'.repeat(2000) }));
      expect((await s.closed).code).toBe(1009);
      const again = await connect(small, '/v1/chat');
      again.ws.send(JSON.stringify({ name: 'ok' }));
      again.ws.send('');
      expect((await again.closed).code).toBe(1000);
      expect(again.frames).toEqual([{ name: 'ok', amount: 1 }]);
    } finally {
      await small.stop();
    }
  });

  it('an invalid Grpc-Timeout on the upgrade request is answered as an error frame', async () => {
    const s = await connect(c, '/v1/chat', { 'Grpc-Timeout': 'soon' });
    const closed = await s.closed;
    expect(closed.code).toBe(1011);
    expect(s.frames).toEqual([
      { error: { code: 3, message: 'invalid grpc-timeout: soon', details: [] } },
    ]);
  });

  it('refuses upgrades on paths with no bidi-streaming rule (404), leaving HTTP requests there as they were', async () => {
    await expect(connect(c, '/v1/collect')).rejects.toThrow('upgrade refused: 404');
    await expect(connect(c, '/v1/nowhere')).rejects.toThrow('upgrade refused: 404');
    const http = await fetch(`${c.base}/v1/chat`, {
      method: 'POST',
      body: '{"name":"h"}{"name":"i"}',
    });
    expect(await http.text()).toBe(
      '{"result":{"name":"h","amount":1}}\n{"result":{"name":"i","amount":1}}\n',
    );
  });
});

describe('WebSocket binding of server-streaming rules', () => {
  it('the request from the path and query; each response message one frame, then 1000', async () => {
    const s = await connect(c, '/v1/stream?count=3');
    const closed = await s.closed;
    expect(closed.code).toBe(1000);
    expect(s.frames.map((f) => (f as { index?: number }).index ?? 0)).toEqual([0, 1, 2]);
    expect(seen).toContain('/conformance.v1.Conformance/Stream');
  });

  it('a handler error after some messages: {"error": google.rpc.Status} last, then 1011', async () => {
    const s = await connect(c, '/v1/stream?count=2&fail_code=9');
    const closed = await s.closed;
    expect(closed).toEqual({ code: 1011, reason: 'code 9: failed after 2 messages' });
    expect(s.frames.slice(0, 2).map((f) => (f as { index?: number }).index ?? 0)).toEqual([0, 1]);
    expect(s.frames[2]).toMatchObject({ error: { code: 9, message: 'failed after 2 messages' } });
  });
});
