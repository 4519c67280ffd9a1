import pg from 'pg';
import type { Logger } from 'pino';
import { sqlState } from './errors.js';

/** The database autoCreate connects to for looking up and creating others. */
export const MAINTENANCE_DATABASE = 'postgres';

/**
 * Creates `name` (owner postgres, encoding UTF8, SPEC.md 2.8) unless pg_database has it.
 * Another client creating it at the same moment is success: PostgreSQL then reports
 * duplicate_database (42P04), or a unique violation on pg_database's name index (23505).
 * Returns whether this call created it.
 */
export async function ensureDatabase(base: pg.ClientConfig, name: string, logger: Logger): Promise<boolean> {
  const client = new pg.Client({ ...base, database: MAINTENANCE_DATABASE });
  // A connection lost while we hold it surfaces through the failing query instead.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    logger.info(`Creating database [${name}]`);
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} OWNER postgres ENCODING 'UTF8'`);
    } catch (err) {
      const state = sqlState(err);
      if (state !== '42P04' && state !== '23505') throw err;
      logger.info(`Database [${name}] was created by another client meanwhile`);
    }
    logger.info(`Creating database [${name}] success`);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
