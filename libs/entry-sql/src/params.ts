import type { ConnectionOptions } from 'node:tls';

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

export const KNOWN_PARAMS = ['sslmode', 'TimeZone', 'application_name', 'search_path', 'statement_timeout'] as const;

/**
 * Parses `key=value` params (keys are case-insensitive; empty items are skipped) into pg client
 * options. Unknown keys and bad values throw an Error naming the param.
 */
export function parseParams(params: readonly string[]): SessionOptions {
  let sslmode: SslMode = 'disable';
  let applicationName: string | undefined;
  const settings: string[] = [];
  for (const raw of params) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`param "${item}" is not key=value`);
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    const lower = key.toLowerCase();
    if (lower === 'sslmode') {
      if (!(SSL_MODES as readonly string[]).includes(value)) {
        throw new Error(`param "${item}": sslmode must be one of ${SSL_MODES.join(', ')}`);
      }
      sslmode = value as SslMode;
    } else if (lower === 'application_name') {
      applicationName = value;
    } else if (SESSION_SETTINGS[lower] !== undefined) {
      if (value === '') throw new Error(`param "${item}" has no value`);
      settings.push(`-c ${SESSION_SETTINGS[lower]}=${escapeOption(value)}`);
    } else {
      throw new Error(`unknown param "${key}" in "${item}"; known params: ${KNOWN_PARAMS.join(', ')}`);
    }
  }
  return { ssl: sslOptions(sslmode), options: settings.length ? settings.join(' ') : undefined, applicationName };
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
