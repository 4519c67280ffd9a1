import { z } from 'zod';
import { entryBaseShape, observabilityShape, statementLoggerSchema } from '@svcboot/entry-core';

/** ClickHouse's native-protocol ports: @clickhouse/client speaks HTTP only. */
const NATIVE_PORTS = new Map([
  [9000, 'native TCP'],
  [9440, 'native TCP with TLS'],
]);

export interface ParsedAddr {
  /** `http://host:port` or `https://host:port`, what the client is given. */
  url: string;
  /** `host:port` as written, for messages. */
  display: string;
  host: string;
  port: number;
}

const ADDR_RE = /^(?:(https?):\/\/)?(\[[0-9a-fA-F:.]+\]|[^\s:/@[\]]+):(\d{1,5})\/?$/;

/** Parses `host:port` (optionally `http://` / `https://`); returns a message when it is wrong. */
export function parseAddr(addr: string): ParsedAddr | string {
  const m = ADDR_RE.exec(addr.trim());
  if (!m) return `"${addr}" is not host:port (e.g. localhost:8123)`;
  const scheme = m[1] ?? 'http';
  const host = m[2]!;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return `port ${port} is out of range`;
  const native = NATIVE_PORTS.get(port);
  if (native) {
    return `port ${port} is ClickHouse's ${native} port, which this entry does not speak: @clickhouse/client uses the HTTP interface. Use the server's http_port (8123 by default, 8443 for https), e.g. ${host}:8123`;
  }
  return { url: `${scheme}://${host}:${port}`, display: addr.trim(), host, port };
}

/** One `params` item, `setting=value`; empty items (SPEC's `[""]`) are ignored. */
export function parseParams(params: readonly string[]): Record<string, string> | string {
  const settings: Record<string, string> = {};
  for (const raw of params) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) return `"${raw}" is not setting=value (e.g. max_execution_time=30)`;
    const key = item.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `"${key}" is not a ClickHouse setting name`;
    settings[key] = item.slice(eq + 1).trim();
  }
  return settings;
}

const databaseSchema = z.strictObject({
  name: z
    .string()
    .min(1, 'a database needs a name')
    .refine((n) => !n.includes('`') && !n.includes('\0'), 'a database name cannot contain ` or NUL'),
  autoCreate: z.boolean().default(false),
  dryRun: z.boolean().default(false),
  params: z
    .array(z.string())
    .default([])
    .superRefine((params, ctx) => {
      const parsed = parseParams(params);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    }),
});

export const columnarSchema = z
  .strictObject({
    ...entryBaseShape,
    ...observabilityShape,
    // SPEC.md 2.8: a columnardb entry is off unless enabled.
    enabled: z.boolean().default(false),
    user: z.string().default('default'),
    pass: z.string().default(''),
    addr: z
      .string()
      .default('localhost:8123')
      .superRefine((addr, ctx) => {
        const parsed = parseAddr(addr);
        if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
      }),
    database: z.array(databaseSchema).min(1, 'list at least one database under database:'),
    logger: statementLoggerSchema,
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.database.forEach((db, i) => {
      if (seen.has(db.name)) {
        ctx.addIssue({ code: 'custom', path: ['database', i, 'name'], message: `database "${db.name}" is listed twice` });
      }
      seen.add(db.name);
    });
  });

export type ColumnarConfig = z.output<typeof columnarSchema>;
export type ColumnarDatabaseConfig = ColumnarConfig['database'][number];
export type StatementLoggerConfig = ColumnarConfig['logger'];
