/**
 * The bare peer of demo-columnar: Koa + @koa/router + @clickhouse/client, the same table and
 * the same statements for `GET /v1/user` and `PUT /v1/user`, with no svcboot in between.
 * Env: PORT, CLICKHOUSE_ADDR, CLICKHOUSE_DB.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { createClient, ClickHouseLogLevel } from '@clickhouse/client';
import { answerError, serveBare } from '../lib/bare-koa.js';

const url = `http://${process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123'}`;
const database = process.env['CLICKHOUSE_DB'] ?? 'bench_bare';

const admin = createClient({ url, log: { level: ClickHouseLogLevel.OFF } });
await admin.command({ query: `CREATE DATABASE IF NOT EXISTS \`${database}\`` });
await admin.close();
const client = createClient({ url, database, log: { level: ClickHouseLogLevel.OFF } });
await client.command({
  query: `CREATE TABLE IF NOT EXISTS users (id String, name String, created_at DateTime, updated_at DateTime, version UInt64, deleted UInt8)
          ENGINE = ReplacingMergeTree(version) ORDER BY id`,
});

// ClickHouse 18.16 has no server-side parameters: a literal, escaped by hand.
const quote = (s: string): string =>
  `'${s.replace(/[\\']/g, (c) => `\\${c}`).replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}'`;
let lastVersion = 0n;
const nextVersion = (): bigint => {
  const now = BigInt(Date.now()) * 1000n;
  lastVersion = now > lastVersion ? now : lastVersion + 1n;
  return lastVersion;
};

const router = new Router();
router.get('/v1/user', async (ctx) => {
  try {
    const rs = await client.query({
      query:
        'SELECT id, name FROM (SELECT id, name, created_at, deleted FROM users FINAL) WHERE deleted = 0 ORDER BY created_at, id',
      format: 'JSONEachRow',
    });
    ctx.body = await rs.json();
  } catch (err) {
    answerError(ctx, err);
  }
});
router.put('/v1/user', async (ctx) => {
  try {
    const name = typeof ctx.query['name'] === 'string' ? ctx.query['name'] : '';
    const id = randomUUID();
    const now = Math.floor(Date.now() / 1000);
    await client.command({
      query: `INSERT INTO users (id, name, created_at, updated_at, version, deleted) VALUES (${quote(id)}, ${quote(name)}, toDateTime(${now}), toDateTime(${now}), ${nextVersion()}, 0)`,
    });
    ctx.body = { id, name };
  } catch (err) {
    answerError(ctx, err);
  }
});

serveBare(router, () => client.close());
