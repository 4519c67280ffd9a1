import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Child,
  plainEnv,
  sigtermUnderKeepAliveLoad,
  sigtermUnderSharedAgentLoad,
  startOnFreePort,
} from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

describe('httpserver: SIGTERM under keep-alive load, with the defaults', () => {
  it('loses no request: every one on the 8 keep-alive connections is answered, the last with Connection: close, and the app exits 0', async () => {
    const { child, port } = await startOnFreePort((port) => {
      const child = Child.start(
        process.execPath,
        [
          '--conditions=svcboot-source',
          '--import',
          'tsx',
          path.join(here, 'test-support/sigterm-app.ts'),
        ],
        {
          cwd: path.join(here, '..'),
          env: plainEnv({ PORT: String(port) }),
        },
      );
      children.push(child);
      return child;
    });

    const r = await sigtermUnderKeepAliveLoad(child, { port, path: '/v1/ok', connections: 8 });
    const summary = JSON.stringify({
      failures: r.failures.slice(0, 10),
      readiness: r.readiness,
      stdout: child.stdout.slice(-1500),
    });
    expect(r.failures, summary).toEqual([]);
    // The app was taken out by its readiness (not by refusing connections), while it still served.
    expect(r.readiness, summary).toBe(503);
    // Each connection was answered after the signal (a request sent just before it can be the one,
    // answered late on a crowded machine) and closed by the server.
    for (let w = 0; w < 8; w++) {
      const after = r.outcomes.filter((o) => o.worker === w && o.answeredAfterSignal === true);
      expect(after.length, `worker ${w}: ${summary}`).toBeGreaterThan(0);
      expect(after.at(-1)?.connection, `worker ${w}`).toBe('close');
    }
    expect(r.exitCode, summary).toBe(0);
    expect(child.stdout).toContain('Shutdown complete');
  });
});

describe('httpserver: SIGTERM under one keep-alive http.Agent (8 sockets, 16 looping GETs), with the defaults', () => {
  it('loses no request: the client is refused only once the app stops listening, no request it sent is reset, and the app exits 0', async () => {
    const { child, port } = await startOnFreePort((port) => {
      const child = Child.startSource(path.join(here, 'test-support/sigterm-app.ts'), {
        cwd: path.join(here, '..'),
        env: plainEnv({ PORT: String(port) }),
      });
      children.push(child);
      return child;
    });
    // The client goes on through the drain (no load balancer takes the app out): each response
    // that says Connection: close makes it open a new connection, up to the listener's close,
    // which resets every connection the kernel had completed for it (7 per run on main).
    const r = await sigtermUnderSharedAgentLoad(child, { port, path: '/v1/ok', maxSockets: 8 });
    const summary = JSON.stringify({
      ...r,
      lost: r.lost.slice(0, 10),
      stdout: child.stdout.slice(-1500),
    });
    expect(r.lost, summary).toEqual([]);
    expect(r.closedAfterSignal, summary).toBeGreaterThan(0);
    expect(r.exitCode, summary).toBe(0);
  });
});
