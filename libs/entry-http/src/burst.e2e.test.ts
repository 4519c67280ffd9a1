import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  driveBurst,
  freePort,
  plainEnv,
  quantile,
  type BurstResult,
} from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

/** 400 calls at once, as the burst: ~12 s of CPU for a server that serves one at a time. */
const CALLS = 400;

async function burst(env: Record<string, string>): Promise<BurstResult> {
  const port = await freePort();
  const child = Child.startSource(path.join(here, 'test-support/burst-app.ts'), {
    cwd: path.join(here, '..'),
    env: plainEnv({ PORT: String(port), ...env }),
  });
  children.push(child);
  await child.listening(port);
  return driveBurst({
    port,
    path: '/v1/render',
    count: CALLS,
    probePaths: ['/livez', '/readyz'],
    markHeader: 'x-finished-late',
  });
}

/** The numbers for the report (not asserted: the machine is shared). */
function summary(r: BurstResult): Record<string, unknown> {
  const byStatus: Record<string, number> = {};
  for (const c of r.calls) byStatus[String(c.status)] = (byStatus[String(c.status)] ?? 0) + 1;
  const probeMs = r.probes.map((p) => p.latencyMs);
  const served = r.calls.filter((c) => c.status === 200).map((c) => c.latencyMs);
  return {
    byStatus,
    servedP99Ms: Math.round(quantile(served, 0.99)),
    lastAnswerMs: Math.round(Math.max(...r.calls.map((c) => c.latencyMs))),
    probes: r.probes.length,
    probeP50Ms: Math.round(quantile(probeMs, 0.5)),
    probeP99Ms: Math.round(quantile(probeMs, 0.99)),
    probeMaxMs: Math.round(quantile(probeMs, 1)),
  };
}

function expectShedWithProbesAnswered(r: BurstResult): void {
  const numbers = JSON.stringify(summary(r));
  const shed = r.calls.filter((c) => c.status === 503);
  expect(shed.length, numbers).toBeGreaterThan(0);
  expect(
    shed.filter((c) => c.retryAfter !== '1'),
    numbers,
  ).toEqual([]);
  expect(r.calls.filter((c) => c.status === 200).length, numbers).toBeGreaterThan(0);
  expect(
    r.probes.filter((p) => p.status !== 200),
    numbers,
  ).toEqual([]);
  expect(r.probes.length, numbers).toBeGreaterThan(0);
}

describe('httpserver: a burst of 400 calls of 30 ms of CPU each, with the default load shedding', () => {
  it('with a 1 s deadline (timeout middleware): sheds some with Retry-After, serves none past its deadline, /livez and /readyz all 200', async () => {
    const r = await burst({ DEADLINE_MS: '1000' });
    console.log(`burst (httpserver, defaults, 1 s deadline): ${JSON.stringify(summary(r))}`);
    expectShedWithProbesAnswered(r);
    const numbers = JSON.stringify(summary(r));
    // Served in time, by the server's clock: no handler finished past the call's deadline.
    expect(
      r.calls.filter((c) => c.status === 200 && c.mark !== 'false'),
      numbers,
    ).toEqual([]);
    // Every call got an answer from the server: served, shed, or refused at its deadline.
    expect(
      r.calls.filter((c) => c.status !== 200 && c.status !== 503 && c.status !== 504),
      numbers,
    ).toEqual([]);
  });

  it('without deadlines: sheds some with Retry-After, /livez and /readyz all 200', async () => {
    const r = await burst({});
    console.log(`burst (httpserver, defaults, no deadline): ${JSON.stringify(summary(r))}`);
    expectShedWithProbesAnswered(r);
    expect(
      r.calls.filter((c) => c.status !== 200 && c.status !== 503),
      JSON.stringify(summary(r)),
    ).toEqual([]);
  });
});
