import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { callContextOf } from './interceptor.js';
import { startLibrary, type Harness } from './test-support/harness.js';

/**
 * The deadline where a transport has its own: the client's grpc-timeout (gRPC, and the gateway's
 * Grpc-Timeout header) and streams that end with the deadline after what they sent in time. The
 * timeout middleware on a unary call (its answer, message, record, per-path timeoutMs) is checked
 * on every transport by tools/conformance.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

type Cb = (err: unknown, value?: unknown) => void;
interface HandlerCall {
  metadata: Metadata;
  request: Record<string, unknown>;
}
interface StreamCall extends HandlerCall {
  write(m: unknown): boolean;
  end(): void;
}

/** What the slow handlers saw: their signal's abort reason, and when they answered late. */
const seen: string[] = [];

/** Waits for its call's signal to abort (the deadline), then answers anyway: a late answer. */
function lateAnswer(call: HandlerCall, answer: () => void): void {
  const ctx = callContextOf(call);
  if (!ctx) throw new Error('no call context');
  seen.push(`deadline in ${ctx.deadline - ctx.receivedMs <= 60_000 ? 'range' : 'none'}`);
  ctx.signal.addEventListener('abort', () => {
    seen.push(`aborted: ${(ctx.signal.reason as DOMException).name}`);
    setTimeout(() => {
      answer();
      seen.push('answered late');
    }, 20);
  });
}

const overrides = {
  GetShelf: (call: HandlerCall, cb: Cb) => lateAnswer(call, () => cb(null, { name: 'late' })),
  ListBooks: (call: StreamCall) => {
    call.write({ id: 'first' });
    lateAnswer(call, () => {
      call.write({ id: 'late' });
      call.end();
    });
  },
};

// ListBooks' own deadline: 1 s, not 100 ms (the handler writes 'first' before waiting for it; on
// a loaded machine a deadline that passed before the call reached its handler ended it without).
const TIMEOUT = `      timeout:
        enabled: true
        timeoutMs: 60000
        paths:
          - { path: "/test.v1.Library/List*", timeoutMs: 1000 }
`;

async function start(): Promise<Harness> {
  seen.length = 0;
  return startLibrary('    enableSvcGwOption: true\n', { overrides, middleware: TIMEOUT });
}

function recordsOf(records: Array<Record<string, unknown>>, operation: string) {
  return records.filter((r) => r['operation'] === operation);
}

describe("deadlines on gRPC calls: the client's grpc-timeout, server streams", () => {
  it("keeps the client's grpc-timeout when sooner: the handler's signal aborts at it", async () => {
    h = await start();
    // GetShelf's own timeout is 60 s; the client gives 1.5 s (a loaded machine may take 100 ms to
    // deliver the call, and the client's own timer would then end it before the server saw it).
    const res = await new Promise<ServiceError | null>((resolve) => {
      h!.client['GetShelf']!(
        { name: 'shelves/x' },
        new Metadata(),
        { deadline: Date.now() + 1_500 },
        (err: ServiceError | null) => resolve(err),
      );
    });
    expect(res?.code).toBe(4);
    await waitFor('the late answer', () => seen.includes('answered late'));
    // The server's timer for the client's deadline races the client's own, which resets the
    // stream: whichever the server hears of first, the handler's signal aborts, once.
    expect(seen).toHaveLength(3);
    expect(seen[1]).toMatch(/^aborted: (TimeoutError|AbortError)$/);
    const records = await h.stop();
    h = undefined;
    const codes = recordsOf(records, '/test.v1.Library/GetShelf').map((r) => r['resCode']);
    expect(codes).toHaveLength(1);
    expect(codes[0]).toMatch(/^(DeadlineExceeded|Canceled)$/);
  });

  it('ends a server stream with DEADLINE_EXCEEDED after what it sent in time; nothing after', async () => {
    h = await start();
    const got: string[] = [];
    const status = await new Promise<number | undefined>((resolve) => {
      const stream = h!.client['ListBooks']!({ shelf: 's' }) as NodeJS.EventEmitter;
      stream.on('data', (b: { id: string }) => got.push(b.id));
      stream.on('error', (e: ServiceError) => resolve(e.code));
      stream.on('end', () => resolve(undefined));
    });
    expect([status, got]).toEqual([4, ['first']]);
    await waitFor('the late answer', () => seen.includes('answered late'));
    const records = await h.stop();
    h = undefined;
    expect(recordsOf(records, '/test.v1.Library/ListBooks').map((r) => r['resCode'])).toEqual([
      'DeadlineExceeded',
    ]);
  });
});

describe('deadlines on gateway calls: the Grpc-Timeout header, streamed answers', () => {
  it('takes the sooner Grpc-Timeout as the one deadline of the call (the handler sees it)', async () => {
    h = await start();
    // 1 s, not 100 ms: a loaded machine (CI runs projects side by side) may keep the process off
    // the CPU between the request's arrival and its handler for longer than 100 ms, and a deadline
    // passed before the handler is ended without it (nothing in `seen`).
    const res = await fetch(`${h.base}/v1/shelves/other`, { headers: { 'Grpc-Timeout': '1S' } });
    expect(res.status).toBe(504);
    await res.arrayBuffer();
    await waitFor('the late answer', () => seen.includes('answered late'));
    expect(seen).toEqual(['deadline in range', 'aborted: TimeoutError', 'answered late']);
    // an invalid one is still a 400 before the handler
    const bad = await fetch(`${h.base}/v1/shelves/other`, { headers: { 'Grpc-Timeout': 'soon' } });
    expect(bad.status).toBe(400);
    await bad.arrayBuffer();
    expect(seen).toHaveLength(3);
  });

  it('ends a streamed answer with the deadline error after what was sent in time', async () => {
    h = await start();
    const res = await fetch(`${h.base}/v1/shelves/s/books`);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ result: { id: 'first' } });
    expect(lines[1]).toEqual({
      error: { code: 4, message: 'context deadline exceeded', details: [] },
    });
    await waitFor('the late answer', () => seen.includes('answered late'));
    const records = await h.stop();
    h = undefined;
    expect(recordsOf(records, '/test.v1.Library/ListBooks').map((r) => r['resCode'])).toEqual([
      'DeadlineExceeded',
    ]);
  });
});
