import type { App } from '@svcboot/entry-core';
import { httpEntry, respondError, type HttpContext } from '@svcboot/entry-http';
import { relationalDbEntry } from '@svcboot/entry-sql';
import { migrateToLatest } from './migrations.js';
import { EMPTY_USER, type Database } from './schema.js';
import { UserStore } from './users.js';

export interface DemoNames {
  http: string;
  db: string;
}

/**
 * The five routes (ARCHITECTURE.md §7) on the `http` entry, over the first database of the `db`
 * entry, whose schema is migrated when it connects (unless the database is in dryRun).
 */
export function registerRoutes(app: App, names: DemoNames = { http: 'api', db: 'user-db' }): void {
  const sqlEntry = relationalDbEntry(app, names.db);
  const database = sqlEntry.config.database[0]!;
  const users = new UserStore(sqlEntry.db<Database>(database.name));
  if (!database.dryRun) {
    sqlEntry.afterConnect(async (entry) => {
      await migrateToLatest(entry.db(database.name));
    });
  }
  const router = httpEntry(app, names.http).router;

  router.get('/v1/user', (ctx) =>
    guard(ctx, async () => {
      ctx.body = await users.list();
    }),
  );

  router.get('/v1/user/:id', (ctx) =>
    guard(ctx, async () => {
      const id = userId(ctx);
      if (id === undefined) return;
      ctx.body = (await users.get(id)) ?? EMPTY_USER;
    }),
  );

  router.put('/v1/user', (ctx) =>
    guard(ctx, async () => {
      const name = userName(ctx);
      if (name === undefined) return;
      ctx.body = await users.create(name);
    }),
  );

  router.post('/v1/user/:id', (ctx) =>
    guard(ctx, async () => {
      const id = userId(ctx);
      const name = id === undefined ? undefined : userName(ctx);
      if (id === undefined || name === undefined) return;
      if (!(await users.rename(id, name))) return jsonString(ctx, 404, 'user not found');
      ctx.body = (await users.get(id)) ?? EMPTY_USER;
    }),
  );

  router.delete('/v1/user/:id', (ctx) =>
    guard(ctx, async () => {
      const id = userId(ctx);
      if (id === undefined) return;
      if (!(await users.softDelete(id))) return jsonString(ctx, 404, 'user not found');
      ctx.type = 'text/plain';
      ctx.body = 'success';
    }),
  );
}

/** ARCHITECTURE.md §7: any database error is a 500 with the error as JSON. */
async function guard(ctx: HttpContext, handler: () => Promise<void>): Promise<void> {
  try {
    await handler();
  } catch (err) {
    respondError(ctx, 500, err);
  }
}

function jsonString(ctx: HttpContext, status: number, text: string): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(text);
}

const INT4_MAX = 2_147_483_647;

/** The path id as an integer column value, or undefined after answering 400. */
function userId(ctx: HttpContext): number | undefined {
  const raw = String(ctx.params['id'] ?? '');
  const id = /^[+-]?\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isInteger(id) && Math.abs(id) <= INT4_MAX) return id;
  jsonString(ctx, 400, `id must be an integer up to ${INT4_MAX}, got "${raw}"`);
  return undefined;
}

/** The `name` query parameter, or undefined after answering 400. */
function userName(ctx: HttpContext): string | undefined {
  const name = ctx.query['name'];
  if (typeof name === 'string') return name;
  jsonString(
    ctx,
    400,
    name === undefined
      ? 'query parameter "name" is required'
      : 'query parameter "name" must be given once',
  );
  return undefined;
}
