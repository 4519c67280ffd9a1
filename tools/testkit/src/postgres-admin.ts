import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The shared test server (trust auth). */
export const PG_ADDR = '127.0.0.1:5432';

/** Runs one statement as postgres on `database` (default: the maintenance one) of the server at `addr` (default: the shared one). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
  values: unknown[] = [],
  database = 'postgres',
  addr = PG_ADDR,
): Promise<R[]> {
  const [host, port] = addr.split(':');
  const client = new pg.Client({ host, port: Number(port), user: 'postgres', database });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** A database name no other test uses: `svcboot_<tag>_<8 hex digits>`. */
export function uniqueDatabase(tag: string): string {
  return `svcboot_${tag}_${randomBytes(4).toString('hex')}`;
}

export async function databaseExists(name: string, addr = PG_ADDR): Promise<boolean> {
  return (
    (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name], 'postgres', addr))
      .length > 0
  );
}

export async function createDatabase(name: string, addr = PG_ADDR): Promise<void> {
  await adminQuery(`CREATE DATABASE ${pg.escapeIdentifier(name)}`, [], 'postgres', addr);
}

export async function dropDatabase(name: string, addr = PG_ADDR): Promise<void> {
  await adminQuery(
    `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`,
    [],
    'postgres',
    addr,
  );
}
