import type { App } from '@svcboot/entry-core';
import { cacheEntry } from '@svcboot/entry-cache';
import { httpEntry, respondError } from '@svcboot/entry-http';

/** The one key the demo reads and writes (ARCHITECTURE.md §7). */
export const DEMO_KEY = 'demo-key';

/** GET /v1/get and GET /v1/set?value= on the named entries. */
export function registerRoutes(app: App, names = { http: 'api', cache: 'redis-cache' }): void {
  const cache = cacheEntry(app, names.cache);
  const router = httpEntry(app, names.http).router;

  router.get('/v1/get', async (ctx) => {
    const res = await cache.getFromCache<string>({ key: DEMO_KEY });
    if (res.error || !res.success) {
      respondError(
        ctx,
        500,
        res.error ?? new Error(`no value cached under "${DEMO_KEY}"; set one with /v1/set?value=`),
      );
      return;
    }
    ctx.body = { value: res.value };
  });

  router.get('/v1/set', async (ctx) => {
    const value = ctx.query['value'];
    if (typeof value !== 'string') {
      ctx.status = 400;
      ctx.body = JSON.stringify('No value found');
      ctx.type = 'application/json';
      return;
    }
    const res = await cache.addToCache({ key: DEMO_KEY, value });
    if (res.error) {
      respondError(ctx, 500, res.error);
      return;
    }
    ctx.body = { value };
  });
}
