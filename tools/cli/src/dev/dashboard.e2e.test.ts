import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  chromiumBinary,
  isListening,
  plainEnv,
  SOURCE_NODE_ARGS,
  startOnFreePorts,
} from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipeChromium } from './test-support/browser.js';

/*
 * The dashboard as a person uses it, in headless Chromium (Debian's), on demo-chain run by the
 * real `svc dev`: the catalog lists every method of chain.proto, the explorer calls a unary and a
 * server-streaming method and shows the answers, the call appears in live calls, its trace shows
 * records of the three services, and the graph draws front's two client edges. Each view is
 * saved as a PNG in SVC_DEV_SCREENSHOTS (default tools/cli/.test-tmp/dev-screenshots; docs/dev.md
 * shows docs/images/dev/, refreshed by pointing SVC_DEV_SCREENSHOTS there).
 *
 * An end-to-end test (three services, svc dev, Chromium): it runs with SVC_E2E=1 only.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const cliDir = path.resolve(here, '../..');
const chainDir = path.resolve(cliDir, '../../apps/demo-chain');
const shots = path.resolve(
  process.env['SVC_DEV_SCREENSHOTS'] ?? path.join(cliDir, '.test-tmp', 'dev-screenshots'),
);

/** Each service's methods as chain.proto declares them: `/chain.v1.Front/GetAccount`… */
function protoMethods(): string[] {
  const text = readFileSync(path.join(chainDir, 'api/chain/v1/chain.proto'), 'utf8');
  const pkg = /^package\s+([\w.]+);/m.exec(text)?.[1];
  const out: string[] = [];
  for (const m of text.matchAll(/^service\s+(\w+)\s*\{([\s\S]*?)^\}/gm))
    for (const rpc of (m[2] ?? '').matchAll(/rpc\s+(\w+)\s*\(/g))
      out.push(`/${pkg}.${m[1]}/${rpc[1]}`);
  return out;
}

let dev: Child;
let dashboard = '';
let browser: PipeChromium;

async function shot(name: string): Promise<void> {
  writeFileSync(path.join(shots, `${name}.png`), await browser.screenshot());
}

/** Clicks what `selector` finds (the first), in the page. */
async function click(selector: string): Promise<void> {
  const found = await browser.evaluate<boolean>(
    `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return false; e.click(); return true; })()`,
  );
  if (!found) throw new Error(`nothing matches ${selector} in the page`);
}

/** Sets a form control's value as typing would (an input event follows). */
async function type(selector: string, value: string): Promise<void> {
  await browser.evaluate(
    `(() => { const e = document.querySelector(${JSON.stringify(selector)}); e.value = ${JSON.stringify(value)}; e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); })()`,
  );
}

/** Picks the explorer's method of `service` whose path is `method`. */
async function pickMethod(service: string, method: string): Promise<void> {
  const picked = await browser.evaluate<boolean>(`(() => {
    const sel = document.getElementById('x-method');
    const opt = [...sel.options].find((o) => o.textContent.startsWith(${JSON.stringify(`${service} · ${method}`)}));
    if (!opt) return false;
    sel.value = opt.value; sel.dispatchEvent(new Event('change', { bubbles: true })); return true;
  })()`);
  if (!picked) throw new Error(`the explorer offers no ${method} of ${service}`);
}

describe.skipIf(process.env['SVC_E2E'] !== '1')(
  'svc dev dashboard in Chromium (demo-chain)',
  () => {
    beforeAll(async () => {
      const binary = chromiumBinary();
      if (binary === undefined)
        throw new Error(
          'Chromium is not on PATH (chromium, chromium-browser or google-chrome): install it (`apt-get install chromium` on Debian, or tools/scripts/tools.sh)',
        );
      mkdirSync(shots, { recursive: true });
      ({ child: dev } = await startOnFreePorts(
        3,
        ([front, users, billing]) =>
          // From demo-chain's folder, as `npx svc dev` there: its svc.system.yaml.
          Child.start(
            process.execPath,
            [...SOURCE_NODE_ARGS, path.join(cliDir, 'src/bin.ts'), 'dev', '--dashboard-port', '0'],
            {
              cwd: chainDir,
              env: plainEnv({
                PORT: String(front),
                USERS_PORT: String(users),
                BILLING_PORT: String(billing),
              }),
            },
          ),
        {
          what: 'svc dev to start front, users and billing',
          timeoutMs: 90_000,
          ready: async (child, ports) => {
            if (!/\[svc dev\] dashboard: /.test(child.stderr)) return false;
            for (const p of ports) if (!(await isListening(p))) return false;
            // Ready when a call goes through the three (the first one on a loaded machine may
            // outlast front's 2 s client timeouts while users and billing warm up).
            const res = await fetch(`http://127.0.0.1:${ports[0]}/v1/accounts/0`).catch(
              () => undefined,
            );
            await res?.text();
            return res?.status === 200;
          },
        },
      ));
      dashboard = /\[svc dev\] dashboard: (\S+)/.exec(dev.stderr)?.[1] ?? '';
      browser = await PipeChromium.launch(binary, 1200, 760);
    }, 150_000);

    afterAll(async () => {
      await browser?.close();
      if (dev && dev.process.exitCode === null && dev.process.signalCode === null) {
        dev.process.kill('SIGINT');
        await dev.waitForExit(30_000).catch(() => dev.kill());
      }
    }, 60_000);

    it('the catalog lists every method of chain.proto for each grpc entry', async () => {
      await browser.goto(`${dashboard}#catalog`);
      const expected = protoMethods();
      expect(expected).toHaveLength(4);
      const listed = await browser.waitFor<Record<string, string[]>>(
        "the catalog's methods",
        `(() => { const m = [...document.querySelectorAll('li.method')]; if (m.length === 0) return undefined;
         const out = {}; for (const e of m) (out[e.dataset.service] ||= []).push(e.dataset.path); return out; })()`,
      );
      // front and users each load chain.proto: both list its four methods; billing has none.
      expect(listed['front']?.sort()).toEqual([...expected].sort());
      expect(listed['users']?.sort()).toEqual([...expected].sort());
      expect(listed['billing']).toBeUndefined();
      // chain.proto's comment on WatchUsers and the middleware front's boot.yaml turns on.
      const watch = await browser.evaluate<string>(
        'document.querySelector(\'li.method[data-service="front"][data-path="/chain.v1.Front/WatchUsers"]\').textContent',
      );
      expect(watch).toContain('Streams the users the users service lists');
      expect(watch).toContain('goes through logging, trace');
      await shot('catalog');
    });

    let traceId = '';

    it('the explorer checks the request before sending, calls a unary method and shows its answer', async () => {
      await click('a[href="#explorer"]');
      await pickMethod('front', '/chain.v1.Front/GetAccount');
      // An id that is not a string: shown before sending, and Send is off.
      await type('#x-request', '{"id": 7}');
      expect(
        await browser.evaluate<string>("document.getElementById('x-problems').textContent"),
      ).toBe('id must be a string');
      expect(await browser.evaluate<boolean>("document.getElementById('x-send').disabled")).toBe(
        true,
      );
      await type('#x-request', '{"id": "7"}');
      expect(await browser.evaluate<boolean>("document.getElementById('x-send').disabled")).toBe(
        false,
      );
      await click('#x-send');
      const status = await browser.waitFor<string>(
        'the status of GetAccount',
        "(() => { const t = document.getElementById('x-status').textContent; return t.startsWith('calling') ? '' : t; })()",
      );
      expect(status).toMatch(/^OK \(0\)/);
      const answer = JSON.parse(
        await browser.evaluate<string>("document.querySelector('#x-messages pre').textContent"),
      ) as { id: string; name: string; users: { requestId: string } };
      // demo-chain's users service names user N "user N" (src/services.ts).
      expect(answer).toMatchObject({ id: '7', name: 'user 7' });
      const headers = await browser.evaluate<string>(
        "document.getElementById('x-headers').textContent",
      );
      traceId = /x-trace-id: ([0-9a-f]{32})/.exec(headers)?.[1] ?? '';
      expect(traceId).not.toBe('');
      await shot('explorer-unary');
    });

    it('the explorer calls a server-streaming method and shows each message', async () => {
      await pickMethod('front', '/chain.v1.Front/WatchUsers');
      await type('#x-request', '{"count": 3, "intervalMs": 20}');
      await click('#x-send');
      await browser.waitFor(
        'the status of WatchUsers',
        "document.getElementById('x-status').textContent.startsWith('OK (0)')",
      );
      const names = await browser.evaluate<string[]>(
        "[...document.querySelectorAll('#x-messages pre')].map((p) => JSON.parse(p.textContent).name)",
      );
      expect(names).toEqual(['user 0', 'user 1', 'user 2']);
      await shot('explorer-stream');
    });

    it("the call appears in live calls, and its trace shows the three services' records", async () => {
      await click('a[href="#calls"]');
      await type('#f-method', 'GetAccount');
      const link = `a.trace[href="#trace/${traceId}"]`;
      await browser.waitFor(
        'the GetAccount call in live calls',
        `!!document.querySelector('${link}')`,
      );
      const rows = await browser.evaluate<Array<{ service: string; op: string }>>(
        "[...document.querySelectorAll('#calls tr')].map((r) => ({ service: r.dataset.service, op: r.dataset.operation }))",
      );
      expect(rows.every((r) => r.op.includes('GetAccount'))).toBe(true);
      expect(rows.some((r) => r.service === 'front' && r.op === '/chain.v1.Front/GetAccount')).toBe(
        true,
      );
      await shot('live-calls');
      await click(link);
      const services = await browser.waitFor<string[]>(
        'the trace waterfall with users and billing',
        `(() => { const s = [...new Set([...document.querySelectorAll('#trace tr.span')].map((r) => r.dataset.service))];
         return s.includes('users') && s.includes('billing') ? s : undefined; })()`,
      );
      expect(services.sort()).toEqual(['billing', 'front', 'users']);
      // The spans each service's tracer sent svc dev (its Zipkin exporter, turned on by SVC_SET):
      // users' and billing's server spans under front's, in the one trace.
      const spans = await browser.waitFor<Array<{ service: string; depth: number }>>(
        'the spans of the three services',
        `(() => { const r = [...document.querySelectorAll('#trace tr.otel')].map((t) => ({ service: t.dataset.service, depth: Number(t.dataset.depth) }));
           const s = new Set(r.map((x) => x.service)); return s.has('front') && s.has('users') && s.has('billing') ? r : undefined; })()`,
        45_000,
      );
      expect(spans[0]).toEqual({ service: 'front', depth: 0 });
      expect(spans.filter((x) => x.service !== 'front').every((x) => x.depth > 0)).toBe(true);
      await shot('trace');
    });

    it("the graph draws front's client edges to users and billing, with their calls", async () => {
      await click('a[href="#graph"]');
      const edges = await browser.waitFor<string[]>(
        'the graph',
        `(() => { const e = [...document.querySelectorAll('#graph-svg g.edge')]; return e.length ? e.map((g) => g.dataset.from + '>' + g.dataset.to + ' ' + g.lastChild.textContent) : undefined; })()`,
      );
      expect(edges.map((e) => e.split(' ')[0]).sort()).toEqual(['front>billing', 'front>users']);
      // At least the explorer's GetAccount went over each edge.
      for (const e of edges)
        expect(Number(/ (\d+) calls? /.exec(e)?.[1])).toBeGreaterThanOrEqual(1);
      const health = await browser.evaluate<string[]>(
        "[...document.querySelectorAll('#graph-nodes tr')].map((r) => r.children[1].textContent)",
      );
      expect(health).toHaveLength(3);
      expect(health.every((h) => h.startsWith('running (pid '))).toBe(true);
    });

    it('reloads users when users.yaml is saved (SIGHUP, same pid), and the dashboard says so', async () => {
      const pid = /pid (\d+)/.exec(
        await browser.evaluate<string>(
          "[...document.querySelectorAll('#graph-nodes tr')].find((r) => r.firstChild.textContent === 'users').textContent",
        ),
      )?.[1];
      expect(pid).toBeDefined();
      // Saved as it is (an editor's save): the file keeps its content, svc dev sees the write.
      const file = path.join(chainDir, 'users.yaml');
      writeFileSync(file, readFileSync(file, 'utf8'));
      const line = await browser.waitFor<string>(
        "users' reload in svc dev's log",
        "[...document.querySelectorAll('#dev-log tr')].map((r) => r.textContent).find((t) => t.includes('users: reloading (users.yaml changed)'))",
      );
      expect(line).toContain(`SIGHUP to pid ${pid}`);
      await shot('graph');
    });
  },
);
