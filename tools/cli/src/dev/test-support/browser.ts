import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { waitFor } from '@svcboot/testkit';

/*
 * A headless Chromium (Debian's /usr/bin/chromium) driven over the DevTools protocol on a pipe
 * (`--remote-debugging-pipe`: JSON messages ending in NUL on fds 3 and 4), so no WebSocket client
 * is needed: one page, its JavaScript evaluated, clicks, typed text and screenshots. Launched with
 * the flags testkit's HeadlessChromium uses (no network beyond loopback, its own profile and
 * process group).
 */

interface Reply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message: string };
}

export class PipeChromium {
  private nextId = 0;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private sessionId = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
    private readonly input: Writable,
  ) {
    let buf = Buffer.alloc(0);
    (child.stdio[4] as Readable).on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      let end = buf.indexOf(0);
      while (end >= 0) {
        const msg = JSON.parse(buf.subarray(0, end).toString('utf8')) as Reply;
        buf = buf.subarray(end + 1);
        if (msg.id !== undefined) this.pending.get(msg.id)?.(msg);
        end = buf.indexOf(0);
      }
    });
  }

  /** Starts Chromium and opens one blank page of `width`×`height` CSS pixels. */
  static async launch(binary: string, width = 1280, height = 860): Promise<PipeChromium> {
    const profile = mkdtempSync(path.join(tmpdir(), 'svc-dev-chromium-'));
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
        '--hide-scrollbars',
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
        `--user-data-dir=${profile}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true },
    );
    const browser = new PipeChromium(child, profile, child.stdio[3] as Writable);
    const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as {
      targetId: string;
    };
    const { sessionId } = (await browser.send('Target.attachToTarget', {
      targetId,
      flatten: true,
    })) as { sessionId: string };
    browser.sessionId = sessionId;
    await browser.send('Emulation.setDeviceMetricsOverride', {
      width,
      height,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await browser.send('Page.enable');
    return browser;
  }

  /** One DevTools command (to the page once it is attached); rejects with its error. */
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    const message: Record<string, unknown> = { id, method, params };
    if (this.sessionId !== '' && !method.startsWith('Target.'))
      message['sessionId'] = this.sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result ?? {});
      });
      this.input.write(`${JSON.stringify(message)}\0`);
    });
  }

  async goto(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** The value of a JavaScript expression in the page (awaited when it is a promise). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as { result?: { value?: T }; exceptionDetails?: { text: string } };
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
    return r.result?.value as T;
  }

  /** Polls `expression` until it is truthy; its value, or a rejection naming it at the deadline. */
  waitFor<T>(what: string, expression: string, timeoutMs = 30_000): Promise<T> {
    return waitFor(what, async () => (await this.evaluate<T>(expression)) || undefined, {
      timeoutMs,
      intervalMs: 100,
    });
  }

  /** A PNG of the page as shown (the viewport), or of its whole height with `fullPage`. */
  async screenshot(fullPage = false): Promise<Buffer> {
    const params: Record<string, unknown> = { format: 'png' };
    if (fullPage) {
      const { contentSize } = (await this.send('Page.getLayoutMetrics')) as {
        contentSize: { width: number; height: number };
      };
      params['clip'] = {
        x: 0,
        y: 0,
        width: contentSize.width,
        height: contentSize.height,
        scale: 1,
      };
      params['captureBeyondViewport'] = true;
    }
    const { data } = (await this.send('Page.captureScreenshot', params)) as { data: string };
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    const pid = this.child.pid;
    if (this.child.exitCode === null && pid !== undefined) {
      const exited = new Promise((r) => this.child.once('exit', r));
      process.kill(-pid, 'SIGTERM');
      await exited;
    }
    if (pid !== undefined)
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
