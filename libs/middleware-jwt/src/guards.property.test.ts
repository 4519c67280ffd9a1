import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  CallContext,
  CallRejection,
  middlewareSchema,
  type CallInfo,
  type EntryContext,
} from '@svcboot/entry-core';
import { jwtDefinition } from './index.js';

const info: CallInfo = {
  operation: 'GET /v1/x',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/x',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
};
const ctx = { env: { domain: 'prod' }, logger: { warn() {} } } as unknown as EntryContext;
const entry = { entryName: 'e', entryType: 'T', registry: new Registry(), configPath: 'x' };
const create = (key: 'jwt', options: object) =>
  jwtDefinition.create(
    middlewareSchema.parse({ [key]: { enabled: true, ...options } })[key] as never,
    ctx,
    entry,
  );
const callWith = (headers: Record<string, string>, apiQuery = '') =>
  new CallContext({ ...info, apiQuery }, { get: (n) => headers[n.toLowerCase()], set() {} });

/** What a guard's `before` did: `pass`, a rejection's reason, or `threw <something else>`. */
async function outcome(before: () => void | Promise<void>): Promise<string> {
  try {
    await before();
    return 'pass';
  } catch (err) {
    return err instanceof CallRejection && err.status !== 'Internal'
      ? `${err.status} ${err.source?.reason}`
      : `threw ${String(err)}`;
  }
}

// Header-ish text: printable ASCII (what HTTP and gRPC metadata carry), base64 and JWT alphabets.
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

describe('the jwt guard on arbitrary input', () => {
  it('jwt refuses any token it did not sign, as Unauthenticated, never otherwise', async () => {
    const m = create('jwt', {
      symmetric: { token: 'a-shared-secret-of-at-least-32-bytes!' },
      tokenLookup: 'header:Authorization,query:token,cookie:jwt',
    });
    const segment = fc.string({
      unit: fc.constantFrom(...'eyJABCxyz019-_.='.split('')),
      maxLength: 80,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          printable,
          segment,
          fc.tuple(segment, segment, segment).map((p) => p.join('.')),
        ),
        fc.constantFrom('header', 'query', 'cookie'),
        async (token, where) => {
          const call =
            where === 'header'
              ? callWith({ authorization: `Bearer ${token}` })
              : where === 'query'
                ? callWith({}, `token=${encodeURIComponent(token)}`)
                : callWith({ cookie: `jwt=${token}` });
          expect(await outcome(() => m.before!(call))).toMatch(
            /^Unauthenticated (missing_token|invalid_token|bad_signature|wrong_algorithm)$/,
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});
