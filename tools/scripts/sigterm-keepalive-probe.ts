/**
 * Issue 31 point 3's probe, outside the test loop: SIGTERM to a child app (the grpc entry's
 * gateway, or an httpserver entry) under one Node http.Agent({ keepAlive: true, maxSockets: 8 })
 * shared by 16 looping GETs, RUNS times; prints per run what was served, refused and lost
 * (resets, hang-ups, other statuses). Run from the repository root:
 *   node --conditions=svcboot-source --import tsx tools/scripts/sigterm-keepalive-probe.ts grpc 20
 *   node --conditions=svcboot-source --import tsx tools/scripts/sigterm-keepalive-probe.ts http 20
 */
import path from 'node:path';
import {
  Child,
  freePort,
  isListening,
  plainEnv,
  sigtermUnderSharedAgentLoad,
  waitFor,
} from '@svcboot/testkit';

const kind = process.argv[2] === 'http' ? 'http' : 'grpc';
const runs = Number(process.argv[3] ?? 20);
const lib = path.resolve(kind === 'http' ? 'libs/entry-http' : 'libs/grpc-server');
const route = kind === 'http' ? '/v1/ok' : '/v1/shelves/s1';
let totalLost = 0;
for (let i = 1; i <= runs; i++) {
  const port = await freePort();
  const child = Child.start(
    process.execPath,
    [
      '--conditions=svcboot-source',
      '--import',
      'tsx',
      path.join(lib, 'src/test-support/sigterm-app.ts'),
    ],
    { cwd: lib, env: plainEnv({ PORT: String(port) }) },
  );
  try {
    await waitFor(
      'the app to listen',
      async () => child.stdout.includes('listening on port') && (await isListening(port)),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
    const r = await sigtermUnderSharedAgentLoad(child, { port, path: route });
    totalLost += r.lost.length;
    const kinds: Record<string, number> = {};
    for (const l of r.lost) {
      const k =
        l.error !== undefined
          ? `${l.error} (${l.reused ? 'reused' : 'new'} connection)`
          : `status ${l.status}`;
      kinds[k] = (kinds[k] ?? 0) + 1;
    }
    console.log(
      `run ${i}: served ${r.served} (Connection: close after the signal ${r.closedAfterSignal}), refused ${r.refused}, shed ${r.shed}, lost ${r.lost.length} ${JSON.stringify(kinds)}, exit ${r.exitCode}`,
    );
  } finally {
    child.kill();
  }
}
console.log(`${kind}: ${runs} runs, ${totalLost} requests lost in all`);
