import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/internal/errors';

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
  SVC_HTTP_API_SPEC_MISSING: {
    when: "`sw` or `docs` is enabled and a path of `sw.jsonPaths` / `docs.specPaths` (default `docs`) is missing, unreadable, or holds no OpenAPI file (at the entry's bootstrap)",
    fix: 'point the option at your OpenAPI files (e.g. the docs/ folder `swag init` writes), relative to the working folder',
    message: (configPath: string, field: string, where: string, reason: string) =>
      `${configPath}.${field}: no OpenAPI file at ${where}: ${reason}`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-http's catalogued errors. */
export const httpError = errorFactory(httpErrors);
