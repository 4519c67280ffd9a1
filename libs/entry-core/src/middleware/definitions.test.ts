import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { EntryContext } from '../entry.js';
import { authDefinition } from './auth/index.js';
import { corsDefinition } from './cors/index.js';
import { csrfDefinition } from './csrf/index.js';
import { rateLimitDefinition } from './rateLimit/index.js';
import { secureDefinition } from './secure/index.js';
import { timeoutDefinition } from './timeout/index.js';
import type { AnyMiddlewareDefinition } from './definition.js';
import { loadEnabledMiddlewares, middlewareDefinitions } from './definitions.js';
import { MiddlewareRegistry } from './registry.js';

const modules: readonly AnyMiddlewareDefinition[] = [
  secureDefinition,
  corsDefinition,
  authDefinition,
  csrfDefinition,
  rateLimitDefinition,
  timeoutDefinition,
];

const entry = { entryName: 'e', entryType: 'T', registry: new Registry(), configPath: 'x' };
const ctx = {
  app: { name: 'demo', version: '1.0.0', description: '' },
  logger: { warn: () => {}, info: () => {}, error: () => {} },
  redact: (t: string) => t,
} as unknown as EntryContext;

describe("svcboot's middleware definitions, their code on demand", () => {
  it('have the key, placement and schema of their modules’ definitions, in the same order', () => {
    const shape = (d: AnyMiddlewareDefinition) => ({
      key: d.key,
      phase: d.phase,
      before: d.before,
      after: d.after,
      schema: d.schema,
    });
    expect(middlewareDefinitions.map(shape)).toEqual(modules.map(shape));
  });

  it('load the code of the keys a config enables, and only then create', async () => {
    // csrf enabled, cors named but off, an entry without middleware.
    const csrf = middlewareDefinitions.find((d) => d.key === 'csrf')!;
    const options = csrf.schema.parse({ enabled: true });
    await loadEnabledMiddlewares(new MiddlewareRegistry(middlewareDefinitions), [
      { middleware: { csrf: { enabled: true }, cors: { enabled: false } } },
      { name: 'no middleware here' },
    ]);
    const made = csrf.create(options, ctx, entry);
    expect(typeof made.before).toBe('function');
    const cors = middlewareDefinitions.find((d) => d.key === 'cors')!;
    expect(() => cors.create(cors.schema.parse({ enabled: true }), ctx, entry)).toThrow(
      'middleware.cors: its code is not loaded',
    );
  });

  it('an on-demand definition created before its load says so, and creates after it', async () => {
    // Nothing in this file has loaded rateLimit's code (its module's definition, imported above,
    // is not the on-demand one's until load() imports it).
    const rateLimit = middlewareDefinitions.find((d) => d.key === 'rateLimit')!;
    const options = rateLimit.schema.parse({ enabled: true });
    expect(() => rateLimit.create(options, ctx, entry)).toThrow(
      "middleware.rateLimit: its code is not loaded; boot() loads it when boot.yaml enables it (else await the definition's load() before create)",
    );
    await rateLimit.load?.();
    expect(typeof rateLimit.create(options, ctx, entry).before).toBe('function');
  });
});
