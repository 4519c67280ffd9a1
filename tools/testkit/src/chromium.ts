import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.js';
import WebSocket from 'ws';

/** The Chromium binary (Debian's `chromium` package), or undefined when it is not installed. */
export function chromiumBinary(): string | undefined {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

/** A headless Chromium with no network beyond loopback, driven over the DevTools protocol. */
export class HeadlessChromium {
  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
    private readonly endpoint: string,
  ) {}

  static async launch(binary: string): Promise<HeadlessChromium> {
    const profile = await mkdtemp(path.join(os.tmpdir(), 'svcboot-chromium-'));
    const child = spawn(
      binary,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-default-apps',
        '--disable-extensions',
        '--disable-sync',
        '--no-first-run',
        '--metrics-recording-only',
        // Nothing but loopback resolves: the UIs must not need a CDN.
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
        `--user-data-dir=${profile}`,
        '--remote-debugging-port=0',
        'about:blank',
      ],
      // Its own process group, so that close() stops its helper processes (renderer, utility,
      // crashpad) too, not only the browser process.
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    const endpoint = await waitFor(
      'Chromium DevTools endpoint',
      () => /DevTools listening on (ws:\/\/\S+)/.exec(stderr)?.[1],
      { timeoutMs: 30_000 },
    );
    return new HeadlessChromium(child, profile, endpoint);
  }

  /**
   * Opens `url` in a new tab and polls `expression` (a JS expression run in the page) until it is
   * truthy; resolves its value, or rejects at the deadline with the page's last value.
   */
  async waitInPage(url: string, expression: string, timeoutMs = 30_000): Promise<unknown> {
    const base = new URL(this.endpoint);
    const res = await fetch(`http://${base.host}/json/new?${encodeURI(url)}`, { method: 'PUT' });
    const target = (await res.json()) as { webSocketDebuggerUrl: string; id: string };
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    let id = 0;
    const pending = new Map<number, (v: unknown) => void>();
    ws.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as {
        id?: number;
        result?: { result?: { value?: unknown } };
      };
      if (msg.id !== undefined) pending.get(msg.id)?.(msg.result?.result?.value);
    });
    const evaluate = (expr: string): Promise<unknown> =>
      new Promise((resolve) => {
        const n = ++id;
        pending.set(n, resolve);
        ws.send(
          JSON.stringify({
            id: n,
            method: 'Runtime.evaluate',
            params: { expression: expr, returnByValue: true },
          }),
        );
      });
    try {
      return await waitFor(
        `"${expression}" in ${url}`,
        async () => (await evaluate(expression)) || undefined,
        { timeoutMs, intervalMs: 200 },
      );
    } finally {
      ws.close();
      await fetch(`http://${base.host}/json/close/${target.id}`).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const pid = this.child.pid;
    if (this.child.exitCode === null && pid !== undefined) {
      const exited = new Promise((r) => this.child.once('exit', r));
      process.kill(-pid, 'SIGTERM');
      await exited;
    }
    // Helpers of the group may still be writing into the profile as they exit: kill what is
    // left and retry the removal (rm retries on ENOTEMPTY and EBUSY).
    if (pid !== undefined) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
    await rm(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
