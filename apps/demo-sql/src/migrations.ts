import { Migrator, sql, type Kysely, type Migration } from 'kysely';

/** The demo's schema history, in order. Kysely records applied ones in `kysely_migration`. */
export const migrations: Record<string, Migration> = {
  '0001_create_users': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('deleted_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('users_deleted_at_idx')
        .on('users')
        .column('deleted_at')
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('users').execute();
    },
  },
};

/** Applies the migrations not yet applied (Kysely's lock table makes concurrent instances safe). */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(
      `migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return (results ?? []).map((r) => r.migrationName);
}
