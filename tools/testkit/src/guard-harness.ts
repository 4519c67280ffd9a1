import type * as Core from '@svcboot/entry-core';

/** The parts of entry-core a guard harness uses (passed in: testkit does not depend on it). */
export type GuardHarnessCore = Pick<
  typeof Core,
  'CallContext' | 'CallRejection' | 'middlewareSchema'
>;

/** The call every guard test starts from: `GET /v1/x` over HTTP/1.1 from 127.0.0.1. */
const INFO: Core.CallInfo = {
  operation: 'GET /v1/x',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/x',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
};

/**
 * A guard middleware (auth, jwt, …) outside any entry, for property tests of its `before` on
 * arbitrary input: `create` makes it from `middleware.<key>` options (as the schema parses them),
 * in a prod-domain entry; `callWith` a call with these request headers and query; `outcome` what
 * its `before` did.
 */
export function guardHarness(
  core: GuardHarnessCore,
  definition: Core.AnyMiddlewareDefinition,
  registry: Core.MiddlewareEntryInfo['registry'],
) {
  const ctx = { env: { domain: 'prod' }, logger: { warn() {} } } as unknown as Core.EntryContext;
  const entry = { entryName: 'e', entryType: 'T', registry, configPath: 'x' };
  return {
    create(options: object): Core.CallMiddleware {
      const key = definition.key;
      const config = core.middlewareSchema.parse({
        [key]: { enabled: true, ...options },
      }) as Record<string, unknown>;
      return definition.create(config[key] as never, ctx, entry);
    },
    callWith(headers: Record<string, string>, apiQuery = ''): Core.CallContext {
      return new core.CallContext(
        { ...INFO, apiQuery },
        { get: (n) => headers[n.toLowerCase()], set() {} },
      );
    },
    /** What a guard's `before` did: `pass`, a rejection's reason, or `threw <something else>`. */
    async outcome(before: () => void | Promise<void>): Promise<string> {
      try {
        await before();
        return 'pass';
      } catch (err) {
        return err instanceof core.CallRejection && err.status !== 'Internal'
          ? `${err.status} ${err.source?.reason}`
          : `threw ${String(err)}`;
      }
    },
  };
}
