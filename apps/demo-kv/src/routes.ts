import { jsonBody, respondError, type HttpContext, type HttpEntry } from '@svcboot/entry-http';
import type { Cluster, Redis } from '@svcboot/entry-kv';

/** A stored value lives one minute (ARCHITECTURE.md §7). */
export const DEFAULT_TTL_MS = 60_000;

/** The `KV` record: `{key, value}`, both strings. */
export interface KV {
  key: string;
  value: string;
}

export interface KvRoutesOptions {
  /** How long a stored value lives (default one minute). */
  ttlMs?: number;
}

/** A JSON body that is a bare JSON value, e.g. the string `"Key not found!"`. */
function sendJson(ctx: HttpContext, status: number, value: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(value);
}

function isKV(body: unknown): body is KV {
  if (body === null || typeof body !== 'object') return false;
  const { key, value } = body as Record<string, unknown>;
  return typeof key === 'string' && key !== '' && typeof value === 'string';
}

/**
 * `GET /v1/get?key=`: 200 `{key, value}`; 404 `"Key not found!"`; 400 without a key; 500 on a
 * store error. `POST /v1/set` with a JSON `{key, value}`: 200 and an empty body; the value
 * expires after `ttlMs`; 400 when key or value is not a string; 500 for a body that is not JSON
 * or a store error. Error bodies are `{"error": "…"}`.
 */
export function registerKvRoutes(
  router: HttpEntry['router'],
  store: Redis | Cluster,
  options: KvRoutesOptions = {},
): void {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;

  router.get('/v1/get', async (ctx) => {
    const raw = ctx.query['key'];
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!key) {
      sendJson(ctx, 400, 'Query parameter "key" is required, e.g. /v1/get?key=name');
      return;
    }
    let value: string | null;
    try {
      value = await store.get(key);
    } catch (err) {
      respondError(ctx, 500, err);
      return;
    }
    if (value === null) sendJson(ctx, 404, 'Key not found!');
    else ctx.body = { key, value } satisfies KV;
  });

  router.post('/v1/set', async (ctx) => {
    let body: unknown;
    try {
      body = jsonBody(ctx);
    } catch (err) {
      respondError(ctx, 500, err);
      return;
    }
    if (!isKV(body)) {
      sendJson(
        ctx,
        400,
        'The body must be a JSON object {"key": "…", "value": "…"} with a non-empty string key and a string value',
      );
      return;
    }
    try {
      await store.set(body.key, body.value, 'PX', ttlMs);
    } catch (err) {
      respondError(ctx, 500, err);
      return;
    }
    // 200 with an empty body: Koa answers 204 for a null body.
    ctx.status = 200;
    ctx.body = '';
  });
}

/** `KV_TTL_MS` from the environment, or one minute. */
export function ttlFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env['KV_TTL_MS'];
  if (raw === undefined || raw === '') return DEFAULT_TTL_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0)
    throw new Error(`KV_TTL_MS must be a positive whole number of milliseconds, not "${raw}"`);
  return ms;
}
