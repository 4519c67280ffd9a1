import { described, z } from '@svcboot/entry-core/internal/zod';
import { columnarErrors } from './errors.js';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import {
  databaseItemSchema,
  databaseListSchema,
  hostPortSchema,
  msSchema,
  parseHostPort,
  parseParams as parseParamItems,
  statementLoggerSchema,
  type ConnectorParam,
  type HostPort,
} from '@svcboot/entry-core/toolkit';

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

const ADDR_OPTIONS = { schemes: ['http', 'https'] } as const;

/** Why the client cannot use this address (a native-protocol port), or undefined. */
function nativePort({ host, port }: HostPort): { message: string; code: string } | undefined {
  const native = NATIVE_PORTS.get(port);
  if (!native) return undefined;
  return {
    code: 'SVC_COLUMNAR_NATIVE_PORT',
    message: columnarErrors.SVC_COLUMNAR_NATIVE_PORT.message(
      port,
      native,
      `${host.includes(':') ? `[${host}]` : host}:8123`,
    ),
  };
}

/**
 * `host:port`, optionally `http://` / `https://` (entry-core's host:port parser; the port is
 * required); returns a message when it is wrong or names a native-protocol port.
 */
export function parseAddr(addr: string): ParsedAddr | string {
  let parsed: HostPort;
  try {
    parsed = parseHostPort(addr, ADDR_OPTIONS);
  } catch (err) {
    return (err as Error).message;
  }
  const problem = nativePort(parsed);
  if (problem) return problem.message;
  const { host, port } = parsed;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${parsed.scheme ?? 'http'}://${urlHost}:${port}`,
    display: addr.trim(),
    host,
    port,
  };
}

/** A `params` key must be a ClickHouse setting name. */
function checkParam(p: ConnectorParam): string | undefined {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(p.key)
    ? undefined
    : `param "${p.item}": "${p.key}" is not a ClickHouse setting name`;
}

/** `params` as ClickHouse settings (entry-core's parser; empty items skipped); a message when one is wrong. */
export function parseParams(params: readonly string[]): Record<string, string> | string {
  const settings: Record<string, string> = {};
  try {
    for (const p of parseParamItems(params)) {
      const problem = checkParam(p);
      if (problem) return problem;
      settings[p.key] = p.value;
    }
  } catch (err) {
    return (err as Error).message;
  }
  return settings;
}

const databaseSchema = databaseItemSchema({
  checkParam,
  checkName: (n) =>
    n.includes('`') || n.includes('\0') ? 'a database name cannot contain ` or NUL' : undefined,
});

export const columnarSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  // A columnardb entry is off unless enabled.
  enabled: described(
    z.boolean().default(false),
    'false: the entry is not created (columnardb entries are off unless enabled)',
  ),
  user: described(z.string().default('default'), 'The ClickHouse user'),
  pass: described(z.string().default(''), 'The password; write it as "${CLICKHOUSE_PASS}"'),
  addr: hostPortSchema('localhost:8123', ADDR_OPTIONS, nativePort).describe(
    "The server's HTTP interface, host:port or http(s)://host:port (8123; not the native 9000)",
  ),
  database: databaseListSchema(databaseSchema).describe(
    'The databases to use: name, autoCreate, dryRun, params (ClickHouse settings as key=value)',
  ),
  logger: statementLoggerSchema.describe(
    'Where and how statements are logged (entry or level, encoding, outputPaths, slowThresholdMs)',
  ),
  readinessCheck: described(
    z.boolean().default(true),
    "The app's /readyz answers 503 while the server's health probe fails.",
  ),
  healthCheckIntervalMs: described(
    msSchema.default(5000),
    "The server's `/ping` this often once bootstrapped; 0: no probe.",
  ),
});

export type ColumnarConfig = z.output<typeof columnarSchema>;
export type ColumnarDatabaseConfig = ColumnarConfig['database'][number];
export type StatementLoggerConfig = ColumnarConfig['logger'];
