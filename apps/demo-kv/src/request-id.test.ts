import { parseConsoleRecord, SEPARATOR } from '@svcboot/entry-core';
import {
  Child,
  consoleRecordTexts,
  plainEnv,
  RawHttpConnection,
  type RawResponse,
  startOnFreePort,
  waitFor,
} from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDir } from './test-support/demo-app.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let port: number;
let demo: Child;

/** The event records in the demo's stdout, as key → value maps. */
function records(stdout: string): Array<Record<string, string>> {
  return consoleRecordTexts(stdout, SEPARATOR).map((text) =>
    Object.fromEntries(parseConsoleRecord(text)),
  );
}

/** GET /v1/get with exactly these header lines (raw bytes: Node's clients refuse CR/LF in values). */
async function rawGet(headerLines: string): Promise<RawResponse> {
  const conn = await RawHttpConnection.open(port);
  try {
    await conn.write(
      `GET /v1/get?key=svcboot-demo-kv-request-id-absent HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headerLines}Connection: close\r\n\r\n`,
    );
    return await conn.nextResponse();
  } finally {
    conn.destroy();
  }
}

async function recordFor(requestId: string): Promise<Record<string, string>> {
  return waitFor(
    `the event record of ${requestId}`,
    () => records(demo.stdout).find((r) => JSON.parse(r['ids'] ?? '{}').requestId === requestId),
    { timeoutMs: 10_000 },
  );
}

beforeAll(async () => {
  // The demo's boot.yaml leaves the meta and logging middleware off; switch them on as an operator would.
  ({ child: demo, port } = await startOnFreePort(
    (port) =>
      Child.start(
        process.execPath,
        [
          '--conditions=svcboot-source',
          '--import',
          'tsx',
          'src/main.ts',
          '--set',
          'httpserver.kv-api.middleware.meta.enabled=true',
          '--set',
          'httpserver.kv-api.middleware.logging.enabled=true',
        ],
        { cwd: demoDir, env: plainEnv({ PORT: String(port), REDIS_ADDR: '127.0.0.1:6379' }) },
      ),
    { what: 'the demo to listen', timeoutMs: 30_000 },
  ));
});

afterAll(() => demo?.kill());

describe('demo-kv: a hostile X-Request-Id (end to end, meta and logging middleware on)', () => {
  it('keeps a well-formed incoming id (the control: replacement below is not the default)', async () => {
    const res = await rawGet('X-Request-Id: client-id-1234\r\n');
    expect(res.status).toBe(404);
    expect(res.headers['x-request-id']).toBe('client-id-1234');
    expect((await recordFor('client-id-1234'))['operation']).toBeDefined();
  });

  it('replaces an over-long or unsafe id with a fresh UUID, in the response and in the record', async () => {
    const hostile = [
      'a'.repeat(500),
      `${'x'.repeat(250)}%0D%0ASet-Cookie:%20stolen=1${'y'.repeat(225)}`,
      'abc%0d%0aX-Injected: yes',
      'id\twith\ttabs',
      '<script>alert(1)</script>',
      'a'.repeat(129),
    ];
    const seen = new Set<string>();
    for (const value of hostile) {
      const res = await rawGet(`X-Request-Id: ${value}\r\n`);
      const id = res.headers['x-request-id'] ?? '';
      expect(res.status, value).toBe(404);
      expect(id, value).toMatch(UUID_V4);
      expect(seen.has(id), 'each replacement is fresh').toBe(false);
      seen.add(id);
      expect(Object.keys(res.headers), value).not.toContain('set-cookie');
      expect(Object.keys(res.headers), value).not.toContain('x-injected');
      const record = await recordFor(id);
      expect(JSON.parse(record['ids']!)).toMatchObject({ requestId: id });
      // The hostile text is in no record or log line (no log injection through the id).
      expect(demo.stdout, value).not.toContain(value);
    }
  });

  it('CR/LF inside the header value never reaches the app: the server answers 400 and injects nothing', async () => {
    const before = records(demo.stdout).length;
    const cases = [
      // Obsolete line folding: CRLF then a space continues the value.
      `X-Request-Id: abc\r\n X-Injected: yes\r\n`,
      // A bare LF and a bare CR inside the value.
      `X-Request-Id: abc\nX-Injected: yes\r\n`,
      `X-Request-Id: abc\rX-Injected: yes\r\n`,
      // 500 characters with a folded CRLF in the middle.
      `X-Request-Id: ${'a'.repeat(250)}\r\n ${'b'.repeat(248)}\r\n`,
    ];
    for (const lines of cases) {
      const res = await rawGet(lines);
      expect(res.status, JSON.stringify(lines)).toBe(400);
      expect(res.headers['x-request-id'], JSON.stringify(lines)).toBeUndefined();
      expect(Object.keys(res.headers)).not.toContain('x-injected');
    }
    // A later good request is recorded; none of the rejected ones were.
    const res = await rawGet('X-Request-Id: after-the-bad-ones\r\n');
    expect(res.headers['x-request-id']).toBe('after-the-bad-ones');
    await recordFor('after-the-bad-ones');
    expect(records(demo.stdout).length).toBe(before + 1);
  });
});
