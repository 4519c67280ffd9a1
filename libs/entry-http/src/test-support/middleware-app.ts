import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, type App } from '@svcboot/entry-core';
import { httpEntry, type HttpEntry } from '../index.js';

export interface HttpHarness {
  app: App;
  entry: HttpEntry;
  base: string;
  /** Shuts the app down and returns its JSON records. */
  stop(): Promise<Array<Record<string, unknown>>>;
}

/**
 * Boots an httpserver entry with logging, prom and meta plus `middleware` (YAML lines under
 * `middleware:`, indented by 6 spaces), records as JSON lines in a temp file; `setup` adds routes.
 */
export async function startHttp(
  middleware: string,
  setup: (entry: HttpEntry) => void,
): Promise<HttpHarness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-http-mw-'));
  const events = path.join(dir, 'events.log');
  const app = await boot({
    argv: [],
    env: {},
    configText: `app: { name: httpdemo, version: 1.2.3 }
logger:
  - name: quiet
    level: warn
event:
  - name: ev
    encoding: json
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
  const entry = httpEntry(app, 'api');
  setup(entry);
  await app.bootstrap();
  return {
    app,
    entry,
    base: `http://127.0.0.1:${entry.port}`,
    async stop() {
      await app.shutdown('test');
      const text = await readFile(events, 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      return text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}
