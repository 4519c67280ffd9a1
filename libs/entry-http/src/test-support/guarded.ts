import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, parseConsoleRecord, type App } from '@svcboot/entry-core';
import { httpEntry } from '../index.js';

export interface GuardedServer {
  app: App;
  base: string;
  /** What the routes saw: `GET /v1/secret by:subject:role`. */
  handled: string[];
  /** Shuts down and returns the records written. */
  stop(): Promise<Array<Record<string, string>>>;
}

/**
 * Boots an httpserver entry with `middleware` (YAML text, indented under `middleware:`) beside
 * logging, prom and meta; `env` gives the `${VAR}`s. Its routes (`/v1/secret`, `/v1/public/hello`,
 * `/livezz`) answer with who the guard said the caller is (`ctx.state.call.principal`).
 */
export async function startGuardedHttp(
  middleware: string,
  env: Record<string, string>,
): Promise<GuardedServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-guarded-'));
  const events = path.join(dir, 'events.log');
  const app = await boot({
    argv: [],
    cwd: dir,
    env: { DOMAIN: 'test', ...env },
    configText: `app: { name: httpdemo, version: 1.2.3 }
logger:
  - name: quiet
    level: error
event:
  - name: ev
    outputPaths: ["${events}"]
httpserver:
  - name: api
    port: 0
    host: 127.0.0.1
    loggerEntry: quiet
    eventEntry: ev
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
${middleware}`,
  });
  const handled: string[] = [];
  const entry = httpEntry(app, 'api');
  for (const route of ['/v1/secret', '/v1/public/hello', '/livezz']) {
    entry.router.get(route, (ctx) => {
      const p = ctx.state.call?.principal;
      const who = p ? `${p.by}:${p.subject}:${String(p.claims['role'] ?? '')}` : 'nobody';
      handled.push(`GET ${route} ${who}`);
      ctx.body = { who };
    });
  }
  try {
    await app.bootstrap();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    app,
    base: `http://127.0.0.1:${entry.port}`,
    handled,
    async stop() {
      await app.shutdown('test');
      const text = await readFile(events, 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      return text
        .split(/(?<=\nEOE\n)/)
        .filter((c) => c.trim() !== '')
        .map((c) => Object.fromEntries(parseConsoleRecord(c)) as Record<string, string>);
    },
  };
}

/**
 * A response body as `{"error": message}` when it is the google error model's rejection body
 * (`{"error": {"code", "status", "message", "details": [RequestInfo]}}`, checked whole), so that
 * tests compare messages; any other body as it is.
 */
export function rejectionText(body: string): string {
  try {
    const b = JSON.parse(body) as {
      error?: {
        code?: unknown;
        status?: unknown;
        message?: unknown;
        details?: Array<{ requestId?: unknown }>;
      };
    };
    const e = b.error;
    if (
      e &&
      typeof e === 'object' &&
      typeof e.code === 'number' &&
      typeof e.status === 'string' &&
      typeof e.message === 'string' &&
      typeof e.details?.[0]?.requestId === 'string'
    )
      return JSON.stringify({ error: e.message });
  } catch {
    // not JSON: as it is
  }
  return body;
}
