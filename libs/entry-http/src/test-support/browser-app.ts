import { boot, type App } from '@svcboot/entry-core';
import { httpEntry, type HttpEntry } from '../index.js';

/** An httpserver entry `api` on 127.0.0.1:0 with `middleware` (YAML lines, 6 spaces in) from boot.yaml text. */
export async function startApi(
  middlewareYaml: string,
  setup: (entry: HttpEntry) => void,
  env: Record<string, string> = {},
  extraYaml = '',
): Promise<{ app: App; entry: HttpEntry; base: string }> {
  const app = await boot({
    argv: [],
    env,
    configText: [
      'app: { name: browser, version: 1.0.0 }',
      'logger:',
      '  - name: quiet',
      '    level: error',
      'httpserver:',
      '  - name: api',
      '    port: 0',
      '    host: 127.0.0.1',
      '    loggerEntry: quiet',
      extraYaml,
      '    middleware:',
      '      meta: { enabled: true }',
      middlewareYaml,
    ].join('\n'),
  });
  const entry = httpEntry(app, 'api');
  setup(entry);
  await app.bootstrap();
  return { app, entry, base: `http://127.0.0.1:${entry.port}` };
}
