/**
 * Issue 31 point 1's measurement, outside the test loop: an httpserver entry with the default load
 * shedding and a route that holds the CPU 20 ms (libs/entry-http/src/test-support/overload-app.ts),
 * driven at RATE calls a second for 4 s over 64 keep-alive connections while a probe asks /livez
 * on its own connection, RUNS times; prints served, shed (by reason, from /metrics) and the /livez
 * latencies; with a third argument `off`, the same app with loadShedding.enabled false, for
 * comparison. Run from the repository root:
 *   node --conditions=svcboot-source --import tsx tools/scripts/overload-probe.ts 125 5
 *   node --conditions=svcboot-source --import tsx tools/scripts/overload-probe.ts 125 5 off
 */
import path from 'node:path';
import {
  Child,
  driveOverload,
  freePort,
  isListening,
  plainEnv,
  quantile,
  waitFor,
} from '@svcboot/testkit';

const rate = Number(process.argv[2] ?? 125);
const runs = Number(process.argv[3] ?? 1);
const shedding = process.argv[4] === 'off' ? 'off' : 'on';
const lib = path.resolve('libs/entry-http');
for (let i = 1; i <= runs; i++) {
  const port = await freePort();
  const child = Child.start(
    process.execPath,
    [
      '--conditions=svcboot-source',
      '--import',
      'tsx',
      path.join(lib, 'src/test-support/overload-app.ts'),
    ],
    { cwd: lib, env: plainEnv({ PORT: String(port), LOAD_SHEDDING: shedding }) },
  );
  try {
    await waitFor(
      'the app to listen',
      async () => child.stdout.includes('listening on port') && (await isListening(port)),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const r = await driveOverload({
      port,
      path: '/v1/busy',
      ratePerS: rate,
      durationMs: 4000,
      probePath: '/livez',
    });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const byReason = Object.fromEntries(
      metrics
        .split('\n')
        .filter((l) => l.startsWith('svc_shed_total{'))
        .map((l) => [/reason="([^"]+)"/.exec(l)?.[1], Number(l.slice(l.lastIndexOf(' ') + 1))]),
    );
    const livez = r.probeLatenciesMs;
    console.log(
      JSON.stringify({
        run: i,
        shedding,
        rate,
        sent: r.sent,
        served: r.served,
        shed: r.shed,
        byReason,
        other: r.other,
        livezProbes: livez.length,
        livezNon200: r.probeStatuses.filter((s) => s !== 200).length,
        livezP50Ms: Math.round(quantile(livez, 0.5)),
        livezP99Ms: Math.round(quantile(livez, 0.99)),
        callP50Ms: Math.round(quantile(r.latenciesMs, 0.5)),
        callP99Ms: Math.round(quantile(r.latenciesMs, 0.99)),
        tailMs: Math.round(r.tailMs),
      }),
    );
  } finally {
    child.kill();
  }
}
