import { z } from 'zod';
import {
  databaseItemSchema,
  databaseListSchema,
  entryBaseShape,
  hostPortSchema,
  msSchema,
  observabilityShape,
  statementLoggerSchema,
} from '@svcboot/entry-core';
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
    enabled: z.boolean().default(false),
    domain: z.string().default('*'),
    user: z.string().default('postgres'),
    // The built-in password is the empty string.
    pass: z.string().default(''),
    addr: hostPortSchema('localhost:5432', { defaultPort: DEFAULT_PORT }),
    database: databaseListSchema(databaseSchema),
    logger: sqlLoggerSchema,
    maxOpenConn: z.number().int().positive().default(10),
    maxIdleConn: z.number().int().nonnegative().default(2),
    connMaxLifetimeMs: msSchema.default(0),
    connectTimeoutMs: msSchema.default(5000),
    /** The app's /readyz answers 503 while a database's health probe fails. */
    readinessCheck: z.boolean().default(true),
    /** `SELECT 1` on each database this often (its timeout: connectTimeoutMs); 0: no probe. */
    healthCheckIntervalMs: msSchema.default(5000),
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
