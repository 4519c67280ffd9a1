import { z } from 'zod';
import { entryBaseShape, msSchema, observabilityShape, statementLoggerSchema } from '@svcboot/entry-core';

/** SPEC.md 2.8's default for `database[].params`. */
export const DEFAULT_PARAMS: readonly string[] = ['sslmode=disable', 'TimeZone=Asia/Shanghai'];

export const databaseSchema = z.strictObject({
  name: z.string().min(1, 'a database needs a name'),
  autoCreate: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  preferSimpleProtocol: z.boolean().default(false),
  params: z.array(z.string()).default([...DEFAULT_PARAMS]),
});

/** SPEC.md 2.8's `logger.*` options, shared with the columnar connector (entry-core). */
export const sqlLoggerSchema = statementLoggerSchema;

/** One `relationaldb:` list item, with SPEC.md 2.8's relational defaults. */
export const relationalDbSchema = z
  .strictObject({
    ...entryBaseShape,
    ...observabilityShape,
    // SPEC.md 2.8: relational entries are off unless enabled, and match every domain.
    enabled: z.boolean().default(false),
    domain: z.string().default('*'),
    user: z.string().default('postgres'),
    // SPEC.md leaves the built-in password unnamed; svcboot's is the empty string.
    pass: z.string().default(''),
    addr: z.string().min(1).default('localhost:5432'),
    database: z.array(databaseSchema).min(1, 'list at least one database under database:'),
    logger: sqlLoggerSchema,
    maxOpenConn: z.number().int().positive().default(10),
    maxIdleConn: z.number().int().nonnegative().default(2),
    connMaxLifetimeMs: msSchema.default(0),
    connectTimeoutMs: msSchema.default(5000),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.database.forEach((db, i) => {
      if (seen.has(db.name)) ctx.addIssue({ code: 'custom', path: ['database', i, 'name'], message: `database "${db.name}" is listed twice` });
      seen.add(db.name);
    });
    if (config.maxIdleConn > config.maxOpenConn) {
      ctx.addIssue({ code: 'custom', path: ['maxIdleConn'], message: `maxIdleConn (${config.maxIdleConn}) is larger than maxOpenConn (${config.maxOpenConn})` });
    }
  });

export type RelationalDbConfig = z.output<typeof relationalDbSchema>;
export type DatabaseConfig = z.output<typeof databaseSchema>;
export type SqlLoggerConfig = z.output<typeof sqlLoggerSchema>;
