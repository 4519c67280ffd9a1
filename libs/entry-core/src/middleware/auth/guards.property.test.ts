import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { guardHarness } from '@svcboot/testkit/middleware-harness';
import { CallContext } from '../call.js';
import { CallRejection } from '../rejection.js';
import { middlewareSchema } from '../options.js';
import { authDefinition } from './index.js';

const { create, callWith, outcome } = guardHarness(
  { CallContext, CallRejection, middlewareSchema },
  authDefinition,
  new Registry(),
);

// Header-ish text: printable ASCII (what HTTP and gRPC metadata carry), base64 and JWT alphabets.
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});
const base64ish = fc.string({
  unit: fc.constantFrom(...'ABCabc0123+/=:.-_ '.split('')),
  maxLength: 120,
});

describe('guards on arbitrary input', () => {
  it('auth refuses any Authorization / X-API-Key that is not configured, as Unauthenticated, never otherwise', async () => {
    const m = create({ basic: ['alice:s3cret'], apiKey: ['k-0123456789'] });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          printable,
          base64ish,
          base64ish.map((s) => `Basic ${s}`),
          printable.map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
        ),
        fc.option(printable, { nil: undefined }),
        async (authorization, apiKey) => {
          const headers: Record<string, string> = { authorization };
          if (apiKey !== undefined) headers['x-api-key'] = apiKey;
          const r = await outcome(() => m.before!(callWith(headers)));
          const known =
            authorization.trim() === `Basic ${Buffer.from('alice:s3cret').toString('base64')}` ||
            apiKey === 'k-0123456789';
          if (!known)
            expect(r).toMatch(/^Unauthenticated (missing|malformed|invalid)_credentials$/);
        },
      ),
      { numRuns: 500 },
    );
  });
});
