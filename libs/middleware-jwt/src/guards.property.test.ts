import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CallContext, CallRejection } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/call';
import { guardHarness } from '@svcboot/testkit/middleware-harness';
import { jwtDefinition } from './index.js';

const { create, callWith, outcome } = guardHarness(
  { CallContext, CallRejection, middlewareSchema },
  jwtDefinition,
  new Registry(),
);

// Header-ish text: printable ASCII (what HTTP and gRPC metadata carry), base64 and JWT alphabets.
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

describe('the jwt guard on arbitrary input', () => {
  it('jwt refuses any token it did not sign, as Unauthenticated, never otherwise', async () => {
    const m = create({
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
