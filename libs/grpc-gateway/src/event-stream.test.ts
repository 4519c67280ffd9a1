import http from 'node:http';
import { HeadlessChromium, chromiumBinary } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startConformance, type Conformance } from './conformance/test-support/harness.js';

// Issue 28 point 2: server-sent events on server-streaming rules (an addition to grpc-gateway,
// whose #26 and #2786 ask for it: EventSource refuses application/json).

interface ServerEvent {
  event: string;
  data: string;
}

/**
 * The WHATWG event-stream parsing rules, written out for the test: `field: value` lines, `data`
 * lines joined with "\n", a blank line dispatches (an event with no data is not dispatched),
 * lines starting with ":" are comments (counted).
 */
function parseEventStream(text: string): { events: ServerEvent[]; comments: number } {
  const events: ServerEvent[] = [];
  let comments = 0;
  let event = '';
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      continue;
    }
    if (line.startsWith(':')) {
      comments++;
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return { events, comments };
}

const SSE = { accept: 'text/event-stream' };

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

describe('server-sent events (Accept: text/event-stream on a server-streaming rule)', () => {
  it('one event per message, its data the message JSON (as the NDJSON result), with no-cache and no proxy buffering', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=3', undefined, SSE);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['x-accel-buffering']).toBe('no');
    const { events } = parseEventStream(r.text);
    const ndjson = await request(c, 'GET', '/v1/stream?count=3');
    const results = ndjson.text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { result: unknown }).result);
    expect(events.map((e) => e.event)).toEqual(['message', 'message', 'message']);
    expect(events.map((e) => JSON.parse(e.data) as unknown)).toEqual(results);
    expect(results).toEqual([{}, { index: 1 }, { index: 2 }]);
  });

  it('a failure after messages is a named "error" event with the google.rpc.Status, then the end', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=2&failCode=9', undefined, SSE);
    expect(r.status).toBe(200);
    const { events } = parseEventStream(r.text);
    expect(events).toHaveLength(3);
    expect(events[2]!.event).toBe('error');
    expect(JSON.parse(events[2]!.data)).toEqual({
      code: 9,
      message: 'failed after 2 messages',
      details: [],
    });
  });

  it('a failure before any message: the HTTP status of its code, the error event as the body', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=0&failCode=5', undefined, SSE);
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(parseEventStream(r.text).events).toEqual([
      {
        event: 'error',
        data: JSON.stringify({ code: 5, message: 'failed after 0 messages', details: [] }),
      },
    ]);
  });

  it('a stream with no message is an empty event stream', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=0', undefined, SSE);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.text).toBe('');
  });

  it('a stream past its Grpc-Timeout deadline ends with an error event, code 4', async () => {
    // 1 s: the stream must have started (its first event sent) before the deadline, which a
    // loaded machine may not manage in a few hundred ms (then the answer is a 504, rightly).
    const r = await request(c, 'GET', '/v1/stream?count=100000&wait=20', undefined, {
      ...SSE,
      'grpc-timeout': '1S',
    });
    expect(r.status).toBe(200);
    const { events } = parseEventStream(r.text);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: JSON.stringify({ code: 4, message: 'context deadline exceeded', details: [] }),
    });
    expect(events.slice(0, -1).every((e) => e.event === 'message')).toBe(true);
  });

  it('Accept with several media ranges and parameters still selects the event stream; without it, NDJSON', async () => {
    const r = await request(c, 'GET', '/v1/stream?count=1', undefined, {
      accept: 'application/json;q=0.5, Text/Event-Stream;q=1',
    });
    expect(r.headers['content-type']).toBe('text/event-stream');
    const plain = await request(c, 'GET', '/v1/stream?count=1', undefined, {
      accept: 'application/json',
    });
    expect(plain.headers['content-type']).toBe('application/x-ndjson');
  });

  it('unary rules and HttpBody streams ignore Accept: text/event-stream', async () => {
    const unary = await request(c, 'GET', '/v1/echo/x', undefined, SSE);
    expect(unary.headers['content-type']).toBe('application/json');
    const download = await request(c, 'GET', '/v1/download', undefined, SSE);
    expect(download.headers['content-type']).toBe('text/html');
  });
});

describe('server-sent events heartbeats (gwOption.sseHeartbeatMs)', () => {
  /** Reads an event stream until `until` holds for what came so far, then closes the connection. */
  function readUntil(
    port: number,
    target: string,
    until: (text: string) => boolean,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: target, headers: SSE }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (until(text)) {
            resolve({ status: res.statusCode ?? 0, text });
            req.destroy();
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
    });
  }

  it('a comment line while the stream is idle, before and between events', async () => {
    const d = await startConformance('    gwOption:\n      sseHeartbeatMs: 20\n');
    try {
      // The handler waits 60 s between messages: the comments come long before its next one.
      const r = await readUntil(d.port, '/v1/stream?count=2&wait=60000', (text) => {
        const { events, comments } = parseEventStream(text);
        return events.length === 1 && comments >= 2;
      });
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/^(: heartbeat\n\n)*data: \{\}\n\n(: heartbeat\n\n)+$/);
    } finally {
      await d.stop();
    }
  });

  it('0 sends none', async () => {
    const d = await startConformance('    gwOption:\n      sseHeartbeatMs: 0\n');
    try {
      const r = await request(d, 'GET', '/v1/stream?count=3&wait=50', undefined, SSE);
      expect(parseEventStream(r.text)).toEqual({
        events: [
          { event: 'message', data: '{}' },
          { event: 'message', data: '{"index":1}' },
          { event: 'message', data: '{"index":2}' },
        ],
        comments: 0,
      });
    } finally {
      await d.stop();
    }
  });
});

// SVC_SKIP_BROWSER=1 skips this test (vitest shows it as skipped); otherwise a machine without
// Chromium fails it, saying what to install.
describe.skipIf(process.env['SVC_SKIP_BROWSER'] === '1')("a browser's EventSource", () => {
  let browser: HeadlessChromium;
  beforeAll(async () => {
    const binary = chromiumBinary();
    if (!binary)
      throw new Error(
        'Chromium is not on PATH (chromium, chromium-browser or google-chrome): install it (`apt-get install chromium` on Debian, or tools/scripts/tools.sh), or set SVC_SKIP_BROWSER=1 to skip this test',
      );
    browser = await HeadlessChromium.launch(binary);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /**
   * Opens an EventSource on `target` from a page of the entry's own origin and collects what it
   * dispatches until the first `error` (a named error event has data; the end of the stream is a
   * plain error Event, after which EventSource would reconnect: the page closes it).
   */
  const collect = (target: string): string => `(() => {
    if (!window.__sse) {
      window.__seen = [];
      const es = new EventSource(${JSON.stringify(target)});
      window.__sse = es;
      es.onmessage = (e) => window.__seen.push({ type: e.type, data: JSON.parse(e.data) });
      es.addEventListener('error', (e) => {
        window.__seen.push({ type: 'error', data: 'data' in e ? JSON.parse(e.data) : null });
        es.close();
        window.__done = true;
      });
    }
    return window.__done ? JSON.stringify(window.__seen) : '';
  })()`;

  it('receives each message as a message event, then the end of the stream', async () => {
    const seen = await browser.waitInPage(`${c.base}/v1/echo/page`, collect('/v1/stream?count=3'));
    expect(JSON.parse(String(seen))).toEqual([
      { type: 'message', data: {} },
      { type: 'message', data: { index: 1 } },
      { type: 'message', data: { index: 2 } },
      { type: 'error', data: null },
    ]);
  }, 60_000);

  it('receives a failure as an "error" event carrying the google.rpc.Status', async () => {
    const seen = await browser.waitInPage(
      `${c.base}/v1/echo/page`,
      collect('/v1/stream?count=1&failCode=7'),
    );
    expect(JSON.parse(String(seen))).toEqual([
      { type: 'message', data: {} },
      { type: 'error', data: { code: 7, message: 'failed after 1 messages', details: [] } },
    ]);
  }, 60_000);
});
