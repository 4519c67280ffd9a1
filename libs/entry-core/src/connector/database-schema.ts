import { z } from '../zod.js';
import { described } from '../described.js';
import { parseParams, type ConnectorParam } from './params.js';

export interface DatabaseSchemaOptions<E extends z.ZodRawShape> {
  /** `params` when the item has none (e.g. `['sslmode=disable']`). */
  defaultParams?: readonly string[];
  /** A message when the connector cannot take this param (unknown key, bad value). */
  checkParam?: (param: ConnectorParam) => string | undefined;
  /** A message when the connector cannot take this database name. */
  checkName?: (name: string) => string | undefined;
  /** The connector's own options of one database (e.g. `preferSimpleProtocol`). */
  extra?: E;
}

/**
 * One item of a connector's `database:` list: `name`, `autoCreate`, `dryRun`, `params` (checked
 * here, at config time, with the item's path), plus the connector's `extra` options.
 */
export function databaseItemSchema<E extends z.ZodRawShape = Record<never, never>>(
  options: DatabaseSchemaOptions<E> = {},
) {
  const { checkName, checkParam } = options;
  return z.strictObject({
    name: described(
      z
        .string()
        .min(1, 'a database needs a name')
        .superRefine((name, ctx) => {
          const message = checkName?.(name);
          if (message) ctx.addIssue({ code: 'custom', message });
        }),
      "The database's name",
    ),
    autoCreate: described(
      z.boolean().default(false),
      'Create the database at bootstrap when it is missing',
    ),
    dryRun: described(
      z.boolean().default(false),
      'Send no statement: each is compiled and handed to the statement logger (at warn) instead',
    ),
    params: described(
      z
        .array(z.string())
        .default([...(options.defaultParams ?? [])])
        .superRefine((params, ctx) => {
          let parsed: ConnectorParam[];
          try {
            parsed = parseParams(params);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
            return;
          }
          for (const p of parsed) {
            const message = checkParam?.(p);
            if (message) ctx.addIssue({ code: 'custom', message });
          }
        }),
      'Connection parameters as key=value items',
    ),
    ...(options.extra ?? ({} as E)),
  });
}

/**
 * A connector's `database:` list: at least one item, no name twice (reported at the second one's
 * `name`).
 */
export function databaseListSchema<T extends z.ZodType<{ name: string }>>(item: T) {
  return z
    .array(item)
    .min(1, 'list at least one database under database:')
    .superRefine((databases, ctx) => {
      const seen = new Set<string>();
      databases.forEach((db, i) => {
        if (seen.has(db.name))
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            message: `database "${db.name}" is listed twice`,
          });
        seen.add(db.name);
      });
    });
}
