import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core';

/** entry-http's errors (codes documented in README.md, "Errors"). */
export const httpErrors = {
  SVC_HTTP_LISTEN_FAILED: {
    when: 'the server cannot listen on its host:port at bootstrap (the port is taken, the host is not an address of this machine, no permission)',
    fix: 'change `port` (or `host`), or stop the process that holds the port',
    message: (host: string, port: number, reason: string, inUse: boolean) =>
      `cannot listen on ${host || '*'}:${port}: ${reason}${inUse ? ' (the port is taken; change port or stop the other process)' : ''}`,
  },
  SVC_HTTP_NOT_BOOTSTRAPPED: {
    when: '`entry.port` was read before `app.bootstrap()` finished',
    fix: "read the port after bootstrap (it is the OS's choice when `port: 0`)",
    message: (configPath: string) => `${configPath}: port is known only after bootstrap`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-http's catalogued errors. */
export const httpError = errorFactory(httpErrors);
