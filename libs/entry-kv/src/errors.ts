import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** entry-kv's errors (codes documented in README.md, "Errors"). */
export const kvErrors = {
  SVC_KV_UNREACHABLE: {
    when: 'bootstrap could not connect to and PING the server(s) within `dialTimeoutMs` (refused, unknown host, wrong password, unknown sentinel master, no answer)',
    fix: 'check `addrs`, that the server is up, `masterName` for sentinels and `user`/`pass`; the message gives the last error seen',
    message: (
      configPath: string,
      mode: string,
      addrs: readonly string[],
      cause: string,
      masterName: string | undefined,
      withAuth: boolean,
    ) =>
      `${configPath}: cannot reach redis (${mode}) at [${addrs.join(', ')}]: ${cause}. ` +
      'Check that the addresses are right and the server is up' +
      (mode === 'sentinel' ? `, and that the sentinels know master "${masterName}"` : '') +
      (withAuth ? ', and the user and pass' : '') +
      '.',
  },
  SVC_KV_WRONG_MODE: {
    when: '`redis()` was called on a cluster entry, or `cluster()` on a single or sentinel entry',
    fix: "call the accessor of the entry's mode (set by `addrs` and `masterName`), or use `client`, typed for both",
    message: (name: string, mode: 'single' | 'sentinel' | 'cluster') =>
      mode === 'cluster'
        ? `kvstore entry "${name}" is a cluster (several addrs); use cluster() or client`
        : `kvstore entry "${name}" is ${mode === 'single' ? 'a single node' : 'sentinel-managed'}, not a cluster; use redis() or client`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-kv's catalogued errors. */
export const kvError = errorFactory(kvErrors);
