/**
 * The bare peer of demo-kv: Koa + @koa/router + ioredis, the same two routes with the same
 * statuses and bodies, with no svcboot in between. Env: PORT, REDIS_ADDR.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { Redis } from 'ioredis';
import { answerError, serveBare } from '../lib/bare-koa.js';

const [host, redisPort] = (process.env['REDIS_ADDR'] ?? '127.0.0.1:6379').split(':');
const redis = new Redis({ host, port: Number(redisPort ?? 6379) });
const TTL_MS = 60_000;

const json = (ctx: Koa.Context, status: number, value: unknown): void => {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(value);
};

const router = new Router();
router.get('/v1/get', async (ctx) => {
  const raw = ctx.query['key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (!key) return json(ctx, 400, 'Query parameter "key" is required');
  try {
    const value = await redis.get(key);
    if (value === null) json(ctx, 404, 'Key not found!');
    else ctx.body = { key, value };
  } catch (err) {
    answerError(ctx, err);
  }
});
router.post('/v1/set', async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    return answerError(ctx, err);
  }
  const { key, value } = (body ?? {}) as Record<string, unknown>;
  if (typeof key !== 'string' || key === '' || typeof value !== 'string')
    return json(ctx, 400, 'The body must be {"key", "value"}');
  try {
    await redis.set(key, value, 'PX', TTL_MS);
    ctx.status = 200;
    ctx.body = '';
  } catch (err) {
    answerError(ctx, err);
  }
});

serveBare(router, () => redis.quit());
