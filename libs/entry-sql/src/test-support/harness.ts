import { afterEach } from 'vitest';
import type { App } from '@svcboot/entry-core';
import { bootText, dropDatabase, scratch } from './pg.js';

/** Per-test setup: a scratch folder, apps shut down and databases dropped after each test. */
export function sqlHarness(): (yaml: string | ((dir: string) => string), databases: string[]) => Promise<{ app: App; dir: string; read(name: string): Promise<string> }> {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return async (yaml, databases) => {
    const tmp = await scratch();
    cleanups.push(tmp.cleanup);
    for (const d of databases) cleanups.push(() => dropDatabase(d));
    const app = await bootText(tmp.dir, typeof yaml === 'string' ? yaml : yaml(tmp.dir));
    cleanups.push(() => app.shutdown('test end'));
    return { app, dir: tmp.dir, read: tmp.read };
  };
}
