import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  boot,
  ConfigError,
  EntryLookupError,
  errorCodes,
  errorTable,
  printableError,
  SvcError,
} from './index.js';
import { coreErrors, errorFactory } from './toolkit.js';
import { parseHostPort } from './connector/address.js';
import { PluginRegistry } from './registry.js';

const readme = readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md'),
  'utf8',
);

describe('error catalogue', () => {
  it('README lists every code of the catalogue, as errorTable writes it', () => {
    expect(readme).toContain(errorTable(coreErrors));
  });

  it('config errors carry SVC_CONFIG_INVALID and keep their message', async () => {
    const err = await boot({ configText: 'logger: 3\n', argv: [], env: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('SVC_CONFIG_INVALID');
    expect((err as Error).message).toMatch(/problem.* in the configuration/);
  });

  it('lookup, address and registry errors carry their codes', async () => {
    const app = await boot({ configText: 'app:\n  name: t\n', argv: [], env: {} });
    try {
      const lookup = (() => {
        try {
          app.entry('nope');
        } catch (e) {
          return e;
        }
      })();
      expect(lookup).toBeInstanceOf(EntryLookupError);
      expect((lookup as SvcError).code).toBe('SVC_ENTRY_NOT_FOUND');
      expect(() => app.entry('nope', 'logger')).toThrow(
        expect.objectContaining({
          code: 'SVC_ENTRY_NOT_FOUND',
          message: expect.stringMatching(/^no logger entry named "nope"/),
        }),
      );
    } finally {
      await app.shutdown('test');
    }
    expect(() => parseHostPort('localhost:99999')).toThrow(
      expect.objectContaining({
        code: 'SVC_ADDRESS_INVALID',
        message: expect.stringContaining('invalid port "99999"'),
      }),
    );
    const registry = new PluginRegistry();
    const plugin = { key: 'dup', packageName: 'a' } as never;
    registry.register(plugin);
    expect(() => registry.register({ key: 'dup', packageName: 'b' } as never)).toThrow(
      expect.objectContaining({
        code: 'SVC_PLUGIN_DUPLICATE',
        message: expect.stringContaining('by a and by b'),
      }),
    );
  });

  it('errorFactory builds the message from the catalogue and keeps the cause', () => {
    const make = errorFactory({
      SVC_TEST_BROKEN: {
        when: 'w',
        fix: 'f',
        message: (what: string, n: number) => `${what} broke ${n} times`,
      },
    });
    const cause = new Error('root');
    const err = make('SVC_TEST_BROKEN', ['pump', 2], { cause });
    expect(err).toBeInstanceOf(SvcError);
    expect(err.message).toBe('pump broke 2 times');
    expect(err.code).toBe('SVC_TEST_BROKEN');
    expect(err.cause).toBe(cause);
    expect(errorTable({ SVC_X: { when: 'a | b', fix: 'c', message: () => '' } })).toContain(
      '| `SVC_X` | a \\| b | c |',
    );
  });
});

describe('printableError', () => {
  it('puts the codes of the error and its causes on the first line, outermost first', () => {
    const cause = new SvcError('SVC_SQL_UNREACHABLE', 'cannot reach PostgreSQL at localhost:1');
    const outer = new SvcError('SVC_BOOTSTRAP_FAILED', `failed: ${cause.message}\nsecond line`, {
      cause: Object.assign(new Error('wrapped', { cause }), { code: 'ECONNREFUSED' }),
    });
    expect(errorCodes(outer)).toEqual(['SVC_BOOTSTRAP_FAILED', 'SVC_SQL_UNREACHABLE']);
    expect(printableError(outer)).toBe(
      'failed: cannot reach PostgreSQL at localhost:1 [SVC_BOOTSTRAP_FAILED, caused by SVC_SQL_UNREACHABLE]\nsecond line',
    );
    expect(printableError(new ConfigError('boot.yaml', [{ path: 'x', message: 'bad' }]))).toBe(
      'boot.yaml: 1 problem in the configuration [SVC_CONFIG_INVALID]\n  - x: bad',
    );
    // Errors without a stable code print as they are.
    expect(printableError(new Error('plain'))).toBe('plain');
  });
});

it("an entry's create error keeps its code in the config problem it becomes", async () => {
  const registry = new PluginRegistry().with([
    {
      key: 'picky',
      packageName: 'test',
      entryType: 'Picky',
      phase: 100,
      schema: z.strictObject({ name: z.string() }),
      create: () => {
        throw new SvcError('SVC_PICKY_REFUSED', 'refuses every config');
      },
    },
  ]);
  const err = await boot({ configText: 'picky:\n  - name: p\n', argv: [], env: {}, registry }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).issues).toEqual([
    { path: 'picky[p]', message: 'refuses every config [SVC_PICKY_REFUSED]' },
  ]);
  expect(printableError(err).split('\n')[0]).toMatch(/\[SVC_CONFIG_INVALID\]$/);
});
