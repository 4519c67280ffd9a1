import pg from 'pg';
import type { Logger } from './sql-logger.js';
import { sqlState } from './errors.js';

/** The database autoCreate connects to for looking up and creating others. */
export const MAINTENANCE_DATABASE = 'postgres';

/** A pg client for the maintenance database, for the connection options `base`. */
export async function connectMaintenance(base: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client({ ...base, database: MAINTENANCE_DATABASE });
  // A connection lost while we hold it surfaces through the failing query instead.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Creates `name` (owner postgres, encoding UTF8, as README's autoCreate says) unless pg_database has it.
 * Returns whether it was missing.
 */
export async function ensureDatabase(
  base: pg.ClientConfig,
  name: string,
  logger: Logger,
): Promise<boolean> {
  const client = await connectMaintenance(base);
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await createDatabase(client, name, logger);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * CREATE DATABASE, with the name escaped. Another client that created it since our lookup (two
 * instances booting at once) is success: PostgreSQL then reports duplicate_database (42P04), or
 * a unique violation on pg_database's name index (23505) when the two commit together.
 */
export async function createDatabase(
  client: pg.Client,
  name: string,
  logger: Logger,
): Promise<void> {
  logger.info(`Creating database [${name}]`);
  try {
    await client.query(
      `CREATE DATABASE ${pg.escapeIdentifier(name)} OWNER postgres ENCODING 'UTF8'`,
    );
  } catch (err) {
    const state = sqlState(err);
    if (state !== '42P04' && state !== '23505') throw err;
    logger.info(`Database [${name}] was created by another client meanwhile`);
  }
  logger.info(`Creating database [${name}] success`);
}
