import type * as Core from '@svcboot/entry-core';
import type * as CallLayer from '@svcboot/entry-core/call';

/**
 * Calls and middleware outside any entry, for unit and property tests of entry-core's middleware
 * and the middleware packages. The entry-core classes they need are passed in: testkit does not
 * depend on entry-core (entry-core's own tests use testkit).
 */

/** What a test call needs of entry-core. */
export type CallCore = Pick<typeof Core, 'CallContext'>;
/** What a guard harness needs of entry-core. */
export type GuardCore = Pick<typeof Core, 'CallContext' | 'CallRejection'> &
  Pick<typeof CallLayer, 'middlewareSchema'>;

/**
 * A call for unit tests, `GET /v1/x` over HTTP/1.1 from 127.0.0.1 unless `info` says otherwise:
 * request headers in, response headers (metadata as `Grpc-Metadata-<name>`, and `setHttp`) out;
 * `body`, the request body a middleware may read.
 */
export function testCall(
  core: CallCore,
  info: Partial<Core.CallInfo>,
  request: Record<string, string> = {},
  body?: string,
): { call: Core.CallContext; out: Map<string, string>; metadataOut: Map<string, string> } {
  const out = new Map<string, string>();
  const metadataOut = new Map<string, string>();
  const lower = new Map(Object.entries(request).map(([k, v]) => [k.toLowerCase(), v]));
  const full: Core.CallInfo = {
    operation: `${info.apiMethod ?? 'GET'} ${info.apiPath ?? '/v1/x'}`,
    remoteAddr: '127.0.0.1:1',
    apiMethod: 'GET',
    apiPath: '/v1/x',
    apiProtocol: 'HTTP/1.1',
    apiQuery: '',
    userAgent: 'test',
    ...info,
  };
  const call = new core.CallContext(full, {
    get: (name) => lower.get(name.toLowerCase()),
    set: (name, value) => void metadataOut.set(`Grpc-Metadata-${name}`, value),
    setHttp: (name, value) => void out.set(name, value),
  });
  if (body !== undefined) {
    const source: CallLayer.CallBodySource = { readBody: () => Promise.resolve(Buffer.from(body)) };
    call.bodySource = source;
  }
  return { call, out, metadataOut };
}

/**
 * A guard middleware (auth, jwt, …) outside any entry, for property tests of its `before` on
 * arbitrary input: `create` makes it from `middleware.<key>` options (as the schema parses them)
 * for a prod-domain entry with `registry`; `callWith` a test call with these request headers and
 * query; `outcome` what its `before` did.
 */
export function guardHarness(
  core: GuardCore,
  definition: Core.AnyMiddlewareDefinition,
  registry: Core.MiddlewareEntryInfo['registry'],
) {
  const ctx = { env: { domain: 'prod' }, logger: { warn() {} } } as unknown as Core.EntryContext;
  const entry = { entryName: 'e', entryType: 'T', registry, configPath: 'x' };
  return {
    create(options: object): Core.CallMiddleware {
      const key = definition.key;
      const parsed = core.middlewareSchema.parse({ [key]: { enabled: true, ...options } });
      return definition.create((parsed as Record<string, unknown>)[key] as never, ctx, entry);
    },
    callWith(headers: Record<string, string>, apiQuery = ''): Core.CallContext {
      return testCall(core, { apiQuery }, headers).call;
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
