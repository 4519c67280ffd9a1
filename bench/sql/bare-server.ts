/**
 * The bare peer of demo-sql: Koa + @koa/router + one pg Pool, the same two statements the demo's
 * Kysely queries compile to, the same pool size and session TimeZone, no svcboot.
 * Env: PORT, PG_ADDR (host:port), PG_DATABASE.
 */
import Router from '@koa/router';
import pg from 'pg';
import { answerError, serveBare } from '../lib/bare-koa.js';

const [host, port] = (process.env['PG_ADDR'] ?? '127.0.0.1:5432').split(':');
const pool = new pg.Pool({
  host,
  port: Number(port),
  user: 'postgres',
  database: process.env['PG_DATABASE'],
  max: 10,
  options: '-c TimeZone=Asia/Shanghai',
});
pool.on('error', () => undefined);

const router = new Router();
router.get('/v1/user/:id', async (ctx) => {
  const id = Number(ctx.params['id']);
  if (!Number.isInteger(id)) {
    ctx.status = 400;
    return;
  }
  try {
    const { rows } = await pool.query(
      'select "id", "name" from "users" where "id" = $1 and "deleted_at" is null',
      [id],
    );
    ctx.body = rows[0] ?? { id: 0, name: '' };
  } catch (err) {
    answerError(ctx, err);
  }
});
router.put('/v1/user', async (ctx) => {
  const name = ctx.query['name'];
  if (typeof name !== 'string') {
    ctx.status = 400;
    return;
  }
  try {
    const { rows } = await pool.query(
      'insert into "users" ("name") values ($1) returning "id", "name"',
      [name],
    );
    ctx.body = rows[0];
  } catch (err) {
    answerError(ctx, err);
  }
});

serveBare(router, () => pool.end());
