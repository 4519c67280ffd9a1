import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/**
 * A Pushgateway-shaped server for tests: records every request (method, path, Authorization,
 * body) and answers `status()` (200 by default; 0 means never answer).
 */
export class RecordingPushgateway {
  readonly received: Received[] = [];
  status: (r: Received) => number = () => 200;
  private waiters: Array<() => void> = [];
  private readonly server: http.Server;
  port = 0;

  constructor(tls?: { cert: Buffer; key: Buffer }) {
    const handler: http.RequestListener = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = {
          method: req.method ?? '',
          url: req.url ?? '',
          authorization: req.headers.authorization,
          contentType: req.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.received.push(r);
        for (const w of this.waiters.splice(0)) w();
        const status = this.status(r);
        if (status === 0) return;
        res.statusCode = status;
        res.end(status === 200 ? '' : 'refused by the test');
      });
    };
    this.server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Resolves once `pred` holds for what was received (re-checked on each request), or rejects after `ms`. */
  async until(pred: (all: readonly Received[]) => boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `the gateway did not get what was expected; got ${JSON.stringify(this.received.map((r) => `${r.method} ${r.url}`))}`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
