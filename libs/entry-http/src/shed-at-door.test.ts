import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boot, type App } from '@svcboot/entry-core';
import { waitFor } from '@svcboot/testkit';
import { httpEntry } from './index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

interface Started {
  base: string;
  /** Ends the held call. */
  release: () => void;
  /** Shuts the app down and returns its records. */
  stop: () => Promise<Array<Record<string, unknown>>>;
}

/** An httpserver entry with records, metrics and meta on, loadShedding `shedding`, and one call held in `GET /v1/hold`. */
async function startHeld(shedding: string): Promise<Started> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-door-'));
  const events = path.join(dir, 'events.log');
  const app: App = await boot({
    argv: [],
    env: {},
    configText: `logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: json
    outputPaths: ["${events}"]
httpserver:
  - name: api
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    eventEntry: records
    prom: { enabled: true }
    loadShedding: ${shedding}
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
`,
  });
  const held: Array<() => void> = [];
  const router = httpEntry(app, 'api').router;
  router.get('/v1/hold', async (ctx) => {
    await new Promise<void>((r) => held.push(r));
    ctx.body = { held: true };
  });
  router.get('/v1/ok', (ctx) => {
    ctx.body = { ok: true };
  });
  await app.bootstrap();
  const base = `http://127.0.0.1:${httpEntry(app, 'api').port}`;
  const first = fetch(`${base}/v1/hold`);
  await waitFor('the first call to be in its handler', () => held.length === 1);
  let stopped = false;
  const stop = async (): Promise<Array<Record<string, unknown>>> => {
    if (stopped) return [];
    stopped = true;
    for (const r of held) r();
    await (await first).text();
    await app.shutdown('test');
    const text = await readFile(events, 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    return text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  cleanups.push(async () => void (await stop()));
  return { base, release: () => held[0]!(), stop };
}

/** What a shed call's answer says, its request id aside. */
async function shedAnswer(res: Response): Promise<unknown> {
  const body = (await res.json()) as { error: { details: Array<Record<string, unknown>> } };
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    pushback: res.headers.get('grpc-retry-pushback-ms'),
    contentType: res.headers.get('content-type'),
    requestIdHeader: res.headers.get('x-request-id') !== null,
    body: {
      ...body,
      error: { ...body.error, details: body.error.details.map((d) => ({ ...d, requestId: '…' })) },
    },
  };
}

describe('httpserver: a call shed before Koa builds its context (at the door)', () => {
  it("answers, records and counts as a call Koa's chain sheds: 503, Retry-After, the error body, rejectedBy loadShedding; probes and metrics still answered", async () => {
    // maxInFlight 1 while one call is held: every other call is shed at the door.
    const door = await startHeld('{ maxInFlight: 1, retryAfterS: 2 }');
    // With a critical list the door leaves every call to the chain (Koa's path): the reference.
    const koa = await startHeld('{ maxInFlight: 1, retryAfterS: 2, critical: ["/v1/pay"] }');

    const atDoor = await shedAnswer(
      await fetch(`${door.base}/v1/ok?x=1`, { headers: { 'x-request-id': 'door-1' } }),
    );
    const inKoa = await shedAnswer(
      await fetch(`${koa.base}/v1/ok?x=1`, { headers: { 'x-request-id': 'door-1' } }),
    );
    expect(atDoor).toEqual(inKoa);
    expect(atDoor).toMatchObject({ status: 503, retryAfter: '2', pushback: '2000' });
    const head = await fetch(`${door.base}/v1/ok`, { method: 'HEAD' });
    expect(head.status).toBe(503);
    expect(await head.text()).toBe('');

    // Probes and scrapes are never shed.
    expect((await fetch(`${door.base}/livez`)).status).toBe(200);
    expect((await fetch(`${door.base}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${door.base}/metrics`)).text();
    expect(metrics).toContain('svc_shed_total{entry_name="api",reason="in_flight"} 2');
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="api",middleware="loadShedding",reason="in_flight"} 2',
    );
    expect(metrics).toMatch(
      /svc_call_res_code_total\{[^}]*rest_method="GET"[^}]*res_code="503"\} 1/,
    );

    // Once the held call ended, calls are served again.
    door.release();
    await waitFor(
      'a call to be served',
      async () => (await fetch(`${door.base}/v1/ok`)).status === 200,
      { timeoutMs: 10_000 },
    );

    const shed = (records: Array<Record<string, unknown>>): unknown[] =>
      records
        .filter((r) => (r['pairs'] as Record<string, unknown>)?.['rejectedBy'] === 'loadShedding')
        .map((r) => [
          r['operation'],
          r['resCode'],
          r['pairs'],
          (r['ids'] as Record<string, unknown>)?.['requestId'],
        ]);
    const doorRecords = shed(await door.stop());
    expect(doorRecords).toEqual([
      ['GET /v1/ok', '503', { rejectedBy: 'loadShedding', rejectReason: 'in_flight' }, 'door-1'],
      [
        'HEAD /v1/ok',
        '503',
        { rejectedBy: 'loadShedding', rejectReason: 'in_flight' },
        expect.any(String),
      ],
    ]);
    expect(doorRecords[0]).toEqual(shed(await koa.stop())[0]);
  });

  it('writes each shed call its own request id and Content-Length into the answer made once, and each entry its own Retry-After', async () => {
    const two = await startHeld('{ maxInFlight: 1, retryAfterS: 2 }');
    const seven = await startHeld('{ maxInFlight: 1, retryAfterS: 7 }');
    // Request ids of different lengths (one made by the entry), the entries in turn: the
    // answer's headers list is shared by the calls of a reason, its Content-Length set per call.
    const ids = ['a', 'a-much-longer-request-id-0123456789', undefined, 'b'];
    for (const [i, id] of ids.entries())
      for (const [entry, retryAfter] of [
        [two, '2'],
        [seven, '7'],
      ] as const) {
        const res = await fetch(`${entry.base}/v1/ok?call=${i}`, {
          headers: id === undefined ? {} : { 'x-request-id': id },
        });
        const text = await res.text();
        expect(res.status).toBe(503);
        expect([res.headers.get('retry-after'), res.headers.get('grpc-retry-pushback-ms')]).toEqual(
          [retryAfter, `${retryAfter}000`],
        );
        expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
        const sent = id ?? res.headers.get('x-request-id');
        expect(sent).toMatch(/^[\w-]+$/);
        const body = JSON.parse(text) as { error: { details: Array<{ requestId: string }> } };
        expect(body.error.details[0]!.requestId).toBe(sent);
      }
  });
});
