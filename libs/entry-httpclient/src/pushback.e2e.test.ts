import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, driveBurst, freePort, plainEnv, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
let front = 0;
let back = 0;

beforeAll(async () => {
  back = await freePort();
  front = await freePort();
  const start = (env: Record<string, string>, port: number): Promise<void> => {
    const c = Child.startSource(path.join(here, 'test-support/chain-app.ts'), {
      cwd: path.join(here, '..'),
      env: plainEnv({ PORT: String(port), ...env }),
    });
    children.push(c);
    return c.listening(port);
  };
  await Promise.all([
    start({ ROLE: 'back' }, back),
    start({ ROLE: 'front', BACK_PORT: String(back) }, front),
  ]);
});
afterAll(() => {
  for (const c of children.splice(0)) c.kill();
});

/** The sum of a counter's samples whose labels contain `match`. */
async function counted(port: number, name: string, match: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  // (The scrapes themselves are calls too: not counted.)
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(match) && !line.includes('/metrics'))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

describe("front → back under the back's overload, with the back's pushback honoured", () => {
  it('fails fast at the front, does not amplify the load on the back, and recovers when the load drops', async () => {
    const calls = 80;
    // A running service is warm: the first outbound fetch of a process loads undici, and the
    // front's pool holds a keep-alive connection to the back for each call of the burst (calls
    // in flight at once, without load: the back's /v1/hold answers once all are waiting). Over
    // new connections the burst would wait in the back's accept queue, in the kernel, where no
    // shedder sees it: Node accepted one connection per turn of its loop in our runs, so the back
    // saw one call per turn, each as it finished the last, and was right to shed nothing.
    const warm = await Promise.all(
      Array.from({ length: calls }, async () => {
        const res = await fetch(`http://127.0.0.1:${front}/v1/front?n=${calls}`);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    // (A back just started on a crowded machine may shed some of them: their connections opened.)
    expect(warm.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    // The back's service time learned on calls one at a time, as a running service knows it.
    for (let i = 0; i < 5; i++) await fetch(`http://127.0.0.1:${front}/v1/front`);
    const shedBefore = await counted(back, 'svc_shed_total', 'entry_name="back"');
    const before = await counted(back, 'svc_call_res_code_total', 'rest_method="GET"');
    const r = await driveBurst({
      port: front,
      path: '/v1/front',
      count: calls,
      probePaths: ['/livez'],
    });
    const byStatus: Record<string, number> = {};
    for (const c of r.calls) byStatus[String(c.status)] = (byStatus[String(c.status)] ?? 0) + 1;
    const attempts = (await counted(back, 'svc_call_res_code_total', 'rest_method="GET"')) - before;
    const shedAtBack = (await counted(back, 'svc_shed_total', 'entry_name="back"')) - shedBefore;
    const numbers = JSON.stringify({ byStatus, attempts, shedAtBack });
    console.log(`front → back burst: ${numbers}`);
    // The back shed part of the burst, and the front passed its refusal on (503) rather than
    // waiting out its 8 s deadline. (A front slowed by a crowded machine may still see its own
    // deadline pass first for some: 504.)
    expect(shedAtBack, numbers).toBeGreaterThan(0);
    expect(byStatus['503'] ?? 0, numbers).toBeGreaterThan(0);
    expect(
      Object.keys(byStatus).filter((s) => s !== '200' && s !== '503' && s !== '504'),
      numbers,
    ).toEqual([]);
    // No retry before the pushback (Retry-After: 20, longer than the whole deadline), though the
    // client retries 503 up to 3 times: the back saw about one attempt per front call, not three.
    // (A connection the crowded back failed to accept is retried after the backoff, as it should.)
    expect(attempts, numbers).toBeLessThanOrEqual(calls * 1.1);
    // The client counted the refusals as failures (the breaker's and the budget's input).
    const failed = await counted(front, 'http_client_handled_total', 'code="503"');
    expect(failed, numbers).toBeGreaterThan(0);

    // Recovery: once the burst is over, calls through the front are served again, ten in a row
    // (the front's breaker, opened by the refusals, fails some fast until its probes pass).
    const shedInBurst = shedBefore + shedAtBack;
    await waitFor(
      'the front to serve 10 calls in a row',
      async () => {
        for (let i = 0; i < 10; i++)
          if ((await fetch(`http://127.0.0.1:${front}/v1/front`)).status !== 200) return false;
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    // Those calls, one at a time, were not shed by the back.
    expect(await counted(back, 'svc_shed_total', 'entry_name="back"')).toBe(shedInBurst);
  });
});
