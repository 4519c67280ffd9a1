import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boot, type App } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { kvEntry } from '@svcboot/entry-kv';
import { registerKvRoutes } from '../routes.js';

export const demoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The demo's boot.yaml and routes, in this process, on a free port. */
export class DemoApp {
  private constructor(
    readonly app: App,
    readonly port: number,
  ) {}

  static async start(options: {
    redisAddr: string;
    ttlMs?: number;
    env?: Record<string, string>;
  }): Promise<DemoApp> {
    const app = await boot({
      configFile: path.join(demoDir, 'boot.yaml'),
      env: { PORT: '0', REDIS_ADDR: options.redisAddr, ...options.env },
      argv: [],
    });
    registerKvRoutes(httpEntry(app, 'kv-api').router, kvEntry(app, 'redis').client, {
      ttlMs: options.ttlMs,
    });
    try {
      await app.bootstrap();
    } catch (err) {
      await app.shutdown('failed test boot');
      throw err;
    }
    return new DemoApp(app, httpEntry(app, 'kv-api').port);
  }

  /** A request; answers status, content type and the body as text. */
  async call(
    method: 'GET' | 'POST',
    p: string,
    body?: string,
  ): Promise<{ status: number; type: string; text: string }> {
    const res = await fetch(`http://127.0.0.1:${this.port}${p}`, {
      method,
      body,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    return {
      status: res.status,
      type: res.headers.get('content-type') ?? '',
      text: await res.text(),
    };
  }

  async stop(): Promise<void> {
    await this.app.shutdown('test done');
  }
}
