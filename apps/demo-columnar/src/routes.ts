import { respondError, type HttpContext, type HttpEntry } from '@svcboot/entry-http';
import type { UserStore } from './users.js';

/** The first value of a query parameter, or "". */
function queryString(ctx: HttpContext, key: string): string {
  const v = ctx.query[key];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

/** ARCHITECTURE.md §7: five routes; never 404; database errors are 500 with `{"error": "…"}`. */
export function registerUserRoutes(router: HttpEntry['router'], store: UserStore): void {
  const handle = (fn: (ctx: HttpContext) => Promise<void>) => async (ctx: HttpContext) => {
    try {
      await fn(ctx);
    } catch (err) {
      respondError(ctx, 500, err);
    }
  };

  router.get(
    '/v1/user',
    handle(async (ctx) => {
      ctx.body = await store.list();
    }),
  );
  router.get(
    '/v1/user/:id',
    handle(async (ctx) => {
      ctx.body = await store.get(String(ctx.params['id']));
    }),
  );
  router.put(
    '/v1/user',
    handle(async (ctx) => {
      ctx.body = await store.create(queryString(ctx, 'name'));
    }),
  );
  router.post(
    '/v1/user/:id',
    handle(async (ctx) => {
      ctx.body = await store.update(String(ctx.params['id']), queryString(ctx, 'name'));
    }),
  );
  router.delete(
    '/v1/user/:id',
    handle(async (ctx) => {
      await store.remove(String(ctx.params['id']));
      ctx.type = 'text/plain';
      ctx.body = 'success';
    }),
  );
}
