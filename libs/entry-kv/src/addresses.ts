import { parseHostPort, type HostPort } from '@svcboot/entry-core/toolkit';

export type { HostPort };

const DEFAULT_PORT = 6379;

/** `host:port`, `[v6]:port` or `host` (port 6379), by entry-core's parser; a URL or a bad port is a clear error. */
export function parseAddress(addr: string): HostPort {
  return parseHostPort(addr, {
    defaultPort: DEFAULT_PORT,
    urlHint: 'credentials go in user and pass',
  });
}
