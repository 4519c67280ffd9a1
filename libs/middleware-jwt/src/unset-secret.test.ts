import { boot, ConfigError, PluginRegistry, type EntryPlugin } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/call';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
// Registers middleware.jwt (its schema, as a service importing the package does).
import './index.js';

// An unset `${JWT_SECRET}` stays as written in the config: the message says the variable is
// unset, never "this one has 13 bytes" (the length of the text `${JWT_SECRET}`).

const issuesOf = (token: string, algorithm = 'HS256') =>
  middlewareSchema
    .safeParse({ jwt: { enabled: true, symmetric: { algorithm, token } } })
    .error?.issues.map((i) => [i.path.join('.'), i.message]);

describe('jwt: a secret from an unset variable', () => {
  it('names the variable and the length a secret needs', () => {
    expect(issuesOf('${JWT_SECRET}')).toEqual([
      [
        'jwt.symmetric.token',
        'JWT_SECRET is unset, so there is no secret: set it to a HS256 secret of at least 32 bytes (RFC 7518 §3.2)',
      ],
    ]);
    expect(issuesOf('${SIGNING_KEY}', 'HS512')?.[0]?.[1]).toContain(
      'SIGNING_KEY is unset, so there is no secret: set it to a HS512 secret of at least 64 bytes',
    );
    // A short literal secret still gets its length.
    expect(issuesOf('short')?.[0]?.[1]).toBe(
      'a HS256 secret needs at least 32 bytes (RFC 7518 §3.2); this one has 5',
    );
  });

  it('through boot.yaml: the loader says the variable is unset, and no length of the literal is reported', async () => {
    const plugin: EntryPlugin = {
      key: 'guarded',
      packageName: 'test',
      entryType: 'Guarded',
      phase: 200,
      schema: z.strictObject({ name: z.string(), middleware: middlewareSchema }),
      create: (c) => ({
        name: c.name,
        type: 'Guarded',
        description: '',
        bootstrap: async () => {},
        interrupt: async () => {},
      }),
    };
    const configText = [
      'guarded:',
      '  - name: api',
      '    middleware:',
      '      jwt:',
      '        enabled: true',
      '        symmetric:',
      '          token: "${JWT_SECRET}"',
      '',
    ].join('\n');
    const err = await boot({
      configText,
      argv: [],
      env: {},
      registry: new PluginRegistry().with([plugin]),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).toContain('environment variable JWT_SECRET is not set and has no default');
    expect(message).toContain('JWT_SECRET is unset, so there is no secret');
    expect(message).not.toMatch(/this one has \d+/);
  });
});
