import type { ConnectionOptions } from 'node:tls';
import { parseParams as parseParamItems, type ConnectorParam } from '@svcboot/entry-core/toolkit';
import { sqlError } from './errors.js';

/** What `database[].params` become on a pg client. */
export interface SessionOptions {
  ssl: false | ConnectionOptions;
  /** The startup `options` packet: `-c TimeZone=… -c search_path=…`, or undefined for none. */
  options: string | undefined;
  applicationName: string | undefined;
}

const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

/** Server settings a param sets for every session, by their lower-cased key. */
const SESSION_SETTINGS: Readonly<Record<string, string>> = {
  timezone: 'TimeZone',
  search_path: 'search_path',
  statement_timeout: 'statement_timeout',
};

export const KNOWN_PARAMS = [
  'sslmode',
  'TimeZone',
  'application_name',
  'search_path',
  'statement_timeout',
] as const;

/** Why PostgreSQL's connector cannot take one param (keys are case-insensitive), or undefined. */
export function checkParam(p: ConnectorParam): string | undefined {
  const lower = p.key.toLowerCase();
  if (lower === 'sslmode') {
    return (SSL_MODES as readonly string[]).includes(p.value)
      ? undefined
      : `param "${p.item}": sslmode must be one of ${SSL_MODES.join(', ')}`;
  }
  if (lower === 'application_name') return undefined;
  if (SESSION_SETTINGS[lower] !== undefined)
    return p.value === '' ? `param "${p.item}" has no value` : undefined;
  return `unknown param "${p.key}" in "${p.item}"; known params: ${KNOWN_PARAMS.join(', ')}`;
}

/**
 * `key=value` params (entry-core's parser; empty items skipped) into pg client options. Unknown
 * keys and bad values throw an Error naming the param (the schema reports them first).
 */
export function parseParams(params: readonly string[]): SessionOptions {
  let sslmode: SslMode = 'disable';
  let applicationName: string | undefined;
  const settings: string[] = [];
  for (const p of parseParamItems(params)) {
    const problem = checkParam(p);
    if (problem) throw sqlError('SVC_SQL_PARAM_INVALID', [problem]);
    const lower = p.key.toLowerCase();
    if (lower === 'sslmode') sslmode = p.value as SslMode;
    else if (lower === 'application_name') applicationName = p.value;
    else settings.push(`-c ${SESSION_SETTINGS[lower]}=${escapeOption(p.value)}`);
  }
  return {
    ssl: sslOptions(sslmode),
    options: settings.length ? settings.join(' ') : undefined,
    applicationName,
  };
}

function sslOptions(mode: SslMode): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      // The chain is checked against the system CAs; the host name is not.
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      // pg sends the host as SNI and Node checks the certificate against it.
      return { rejectUnauthorized: true };
  }
}

/** libpq's `options` splits on spaces; a backslash escapes a space or a backslash. */
function escapeOption(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/ /g, '\\ ');
}
