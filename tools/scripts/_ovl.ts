import path from 'node:path';
import { Child, driveOverload, freePort, isListening, plainEnv, quantile, waitFor } from '@svcboot/testkit';
const lib = path.resolve('libs/entry-http');
const port = await freePort();
const child = Child.start(process.execPath, ['--conditions=svcboot-source', '--import', 'tsx', path.join(lib, 'src/test-support/overload-app.ts')], { cwd: lib, env: plainEnv({ PORT: String(port) }) });
await waitFor('listen', async () => child.stdout.includes('listening on port') && (await isListening(port)), { timeoutMs: 30000, intervalMs: 100 });
const rate = Number(process.argv[2] ?? 125);
const r = await driveOverload({ port, path: '/v1/busy', ratePerS: rate, durationMs: 4000, probePath: '/livez' });
const l = r.latenciesMs;
const buckets: Record<string, number> = {};
for (const x of l) { const b = x < 100 ? '<100' : x < 500 ? '<500' : x < 1000 ? '<1000' : x < 2000 ? '<2000' : x < 4000 ? '<4000' : '>=4000'; buckets[b] = (buckets[b] ?? 0) + 1; }
console.log(JSON.stringify({ sent: r.sent, served: r.served, shed: r.shed, other: r.other, tailMs: Math.round(r.tailMs), buckets, livezP50: quantile(r.probeLatenciesMs, 0.5), livezP99: quantile(r.probeLatenciesMs, 0.99) }));
const m = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
console.log(m.split('\n').filter((x) => x.startsWith('svc_shed_total')).join('\n'));
child.kill();
