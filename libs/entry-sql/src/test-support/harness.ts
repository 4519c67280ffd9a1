import { afterEach } from 'vitest';
import type { App } from '@svcboot/entry-core';
import { bootText, dropDatabase, scratch } from './pg.js';

export interface BootedTestApp {
  app: App;
  dir: string;
  read(name: string): Promise<string>;
  /** The app log (`<dir>/app.log`), complete once the app has shut down. */
  log(): Promise<string>;
}

/**
 * Per-test setup for a test file: `setup` boots a boot.yaml in a scratch folder; after each test
 * the apps are shut down, the listed databases dropped and everything `defer`red run, in reverse.
 */
export function sqlHarness(): {
  setup(yaml: string | ((dir: string) => string), databases: string[]): Promise<BootedTestApp>;
  defer(cleanup: () => Promise<unknown>): void;
} {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const defer = (cleanup: () => Promise<unknown>): void => void cleanups.push(cleanup);
  return {
    defer,
    async setup(yaml, databases) {
      const tmp = await scratch();
      defer(tmp.cleanup);
      for (const d of databases) defer(() => dropDatabase(d));
      const app = await bootText(tmp.dir, typeof yaml === 'string' ? yaml : yaml(tmp.dir));
      defer(() => app.shutdown('test end'));
      return { app, dir: tmp.dir, read: tmp.read, log: () => tmp.read('app.log') };
    },
  };
}
