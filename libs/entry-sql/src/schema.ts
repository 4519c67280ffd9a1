import { described, z } from '@svcboot/entry-core/internal/zod';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import {
  databaseItemSchema,
  databaseListSchema,
  hostPortSchema,
  msSchema,
  statementLoggerSchema,
} from '@svcboot/entry-core/toolkit';
import { checkParam } from './params.js';

/** The default of `database[].params`: no TLS, sessions in Asia/Shanghai time. */
export const DEFAULT_PARAMS: readonly string[] = ['sslmode=disable', 'TimeZone=Asia/Shanghai'];

/** PostgreSQL's port, for an `addr` written without one. */
export const DEFAULT_PORT = 5432;

export const databaseSchema = databaseItemSchema({
  defaultParams: DEFAULT_PARAMS,
  checkParam,
  extra: { preferSimpleProtocol: z.boolean().default(false) },
});

/** The `logger.*` options, shared with the columnar connector (entry-core). */
export const sqlLoggerSchema = statementLoggerSchema;

/** One `relationaldb:` list item, with the relational defaults. */
export const relationalDbSchema = z
  .strictObject({
    ...entryBaseShape,
    ...observabilityShape,
    // Relational entries are off unless enabled, and match every domain.
    enabled: described(
      z.boolean().default(false),
      'false: the entry is not created (relational entries are off unless enabled)',
    ),
    domain: described(
      z.string().default('*'),
      'The DOMAIN this item is for; * or empty matches every domain, an exact match wins',
    ),
    user: described(z.string().default('postgres'), 'The PostgreSQL user'),
    // The built-in password is the empty string.
    pass: described(z.string().default(''), 'The password; write it as "${PG_PASS}"'),
    addr: hostPortSchema('localhost:5432', { defaultPort: DEFAULT_PORT }).describe(
      'The server, host:port (port 5432 when left out)',
    ),
    database: databaseListSchema(databaseSchema).describe(
      'The databases to connect to: name, autoCreate, dryRun, params (key=value connection parameters), preferSimpleProtocol',
    ),
    logger: sqlLoggerSchema.describe(
      'Where and how statements are logged (entry or level, encoding, outputPaths, slowThresholdMs)',
    ),
    maxOpenConn: described(
      z.number().int().positive().default(10),
      'The most connections per database',
    ),
    maxIdleConn: described(
      z.number().int().nonnegative().default(2),
      'The most idle connections kept per database',
    ),
    connMaxLifetimeMs: described(
      msSchema.default(0),
      'Close a connection after this long (0: never)',
    ),
    connectTimeoutMs: described(
      msSchema.default(5000),
      "Time to connect, and the health probe's timeout",
    ),
    readinessCheck: described(
      z.boolean().default(true),
      "The app's /readyz answers 503 while a database's health probe fails.",
    ),
    healthCheckIntervalMs: described(
      msSchema.default(5000),
      '`SELECT 1` on each database this often (its timeout: connectTimeoutMs); 0: no probe.',
    ),
  })
  .superRefine((config, ctx) => {
    if (config.maxIdleConn > config.maxOpenConn) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxIdleConn'],
        message: `maxIdleConn (${config.maxIdleConn}) is larger than maxOpenConn (${config.maxOpenConn})`,
      });
    }
  });

export type RelationalDbConfig = z.output<typeof relationalDbSchema>;
export type DatabaseConfig = z.output<typeof databaseSchema>;
export type SqlLoggerConfig = z.output<typeof sqlLoggerSchema>;
