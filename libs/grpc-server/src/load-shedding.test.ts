import { Client, credentials } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@svcboot/testkit';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** grpc.health.v1.Health/Check for the whole server: the raw response bytes. */
function healthCheck(port: number): Promise<Buffer> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      (err, value) => {
        client.close();
        if (err || !value) reject(err ?? new Error('no response'));
        else resolve(value);
      },
    );
  });
}

describe('grpc entry: load shedding (loadShedding.maxInFlight)', () => {
  it('past maxInFlight sheds gRPC calls with RESOURCE_EXHAUSTED and gateway calls with 503 + Retry-After, never /livez, /readyz, grpc health or /metrics; counts and records them; lets calls in again once the held one ends', async () => {
    const held: Array<() => void> = [];
    h = await startLibrary('    loadShedding: { maxInFlight: 1, retryAfterS: 2 }\n', {
      overrides: {
        GetShelf: (_call: unknown, cb: (err: unknown, value?: unknown) => void) =>
          held.push(() => cb(null, { name: 'held' })),
      },
    });
    const first = unary(h.client, 'GetShelf', { shelf: 's1' });
    await waitFor('the first call to be in its handler', () => held.length === 1);

    const grpc = await unary(h.client, 'Ping', { text: 'a' });
    expect(grpc.error?.code).toBe(8);
    expect(grpc.error?.details).toContain('too many calls in flight');
    expect(grpc.error?.metadata.get('retry-after')).toEqual(['2']);
    // gRFC A6: the pushback a gRPC client honours before a retry, in ms.
    expect(grpc.error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['2000']);

    const gw = await fetch(`${h.base}/v1/shelves/s2`);
    expect(gw.status).toBe(503);
    expect(gw.headers.get('retry-after')).toBe('2');
    expect(await gw.json()).toMatchObject({ code: 8 });

    // Probes and scrapes are never shed.
    expect((await fetch(`${h.base}/livez`)).status).toBe(200);
    expect((await fetch(`${h.base}/readyz`)).status).toBe(200);
    expect([...(await healthCheck(h.port))]).toEqual([0x08, 0x01]);
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toContain('svc_shed_total{entry_name="lib",reason="in_flight"} 2');
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="lib",middleware="loadShedding",reason="in_flight"} 2',
    );

    held[0]!();
    expect((await first).response?.['name']).toBe('held');
    const after = await unary(h.client, 'Ping', { text: 'b' });
    expect(after.error).toBeUndefined();
    expect(after.response?.['text']).toBe('pong b');

    const records = await h.stop();
    h = undefined;
    const shed = records.filter(
      (r) => (r['pairs'] as Record<string, unknown>)?.['rejectedBy'] === 'loadShedding',
    );
    expect(shed.map((r) => [r['operation'], r['resCode'], r['pairs']])).toEqual([
      [
        '/test.v1.Library/Ping',
        'ResourceExhausted',
        { rejectedBy: 'loadShedding', rejectReason: 'in_flight' },
      ],
      [
        '/test.v1.Library/GetShelf',
        'ResourceExhausted',
        { rejectedBy: 'loadShedding', rejectReason: 'in_flight' },
      ],
    ]);
  });

  it('is on by default with the documented thresholds, and off with enabled: false', async () => {
    h = await startLibrary();
    expect(h.entry.config.loadShedding).toEqual({
      enabled: true,
      maxInFlight: 5000,
      maxEventLoopDelayMs: 500,
      maxEventLoopUtilization: 0.95,
      retryAfterS: 1,
      critical: [],
      concurrency: { minLimit: 4, maxLimit: 5000 },
    });
    expect(await (await fetch(`${h.base}/metrics`)).text()).toContain(
      '# TYPE svc_shed_total counter',
    );
    await h.stop();
    const held: Array<() => void> = [];
    h = await startLibrary('    loadShedding: { enabled: false, maxInFlight: 1 }\n', {
      overrides: {
        GetShelf: (_call: unknown, cb: (err: unknown, value?: unknown) => void) =>
          held.push(() => cb(null, { name: 'held' })),
      },
    });
    const first = unary(h.client, 'GetShelf', { shelf: 's1' });
    await waitFor('the first call to be in its handler', () => held.length === 1);
    const second = await unary(h.client, 'Ping', { text: 'b' });
    expect(second.error).toBeUndefined();
    held[0]!();
    expect((await first).error).toBeUndefined();
    expect(await (await fetch(`${h.base}/metrics`)).text()).not.toContain('svc_shed_total');
  });
});
