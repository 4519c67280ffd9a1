import { describe, expect, it } from 'vitest';
import {
  boot,
  ConfigError,
  defaultRegistry,
  entryGetter,
  LoggerEntry,
  PluginRegistry,
} from './index.js';
import { probePlugin } from './test-support/probe-plugin.js';

async function bootError(run: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected boot to fail');
}

describe('boot({ plugins })', () => {
  it('lets two apps with different kinds live in one process', async () => {
    const journal: string[] = [];
    const alpha = probePlugin('alpha', 100, journal);
    const beta = probePlugin('beta', 100, journal);
    const a = await boot({
      plugins: [alpha],
      configText: 'alpha:\n  - name: one\n',
      env: {},
      argv: [],
    });
    const b = await boot({
      plugins: [beta],
      configText: 'beta:\n  - name: two\n',
      env: {},
      argv: [],
    });
    await a.bootstrap();
    await b.bootstrap();
    expect(entryGetter(alpha)(a, 'one').name).toBe('one');
    expect(entryGetter(beta)(b, 'two').name).toBe('two');
    expect(journal).toEqual(['bootstrap one', 'bootstrap two']);
    expect(await a.shutdown()).toBe(true);
    expect(await b.shutdown()).toBe(true);

    const err = await bootError(() =>
      boot({ plugins: [alpha], configText: 'beta:\n  - name: two\n', env: {}, argv: [] }),
    );
    expect(err.issues[0]).toMatchObject({ path: 'beta' });
    expect(err.issues[0]!.message).toContain('unknown top-level key "beta"');
  });

  it('sees neither the kinds imported into the default registry nor the other app’s', async () => {
    defaultRegistry.register(probePlugin('imported', 100, []));
    // The default registry serves a boot without plugins...
    const plain = await boot({ configText: 'imported:\n  - name: x\n', env: {}, argv: [] });
    expect(plain.entry('x', 'imported').name).toBe('x');
    // ...and an app given plugins sees only those and the built-ins.
    const err = await bootError(() =>
      boot({
        plugins: [probePlugin('alpha', 100, [])],
        configText: 'imported:\n  - name: x\n',
        env: {},
        argv: [],
      }),
    );
    expect(err.issues[0]!.message).toContain('unknown top-level key "imported"');
    expect(err.issues[0]!.message).toMatch(/\(known: [^)]*alpha/);
  });

  it('keeps the built-in logger, event and cert kinds', async () => {
    const app = await boot({
      plugins: [],
      configText: 'logger:\n  - name: quiet\n    level: warn\n',
      env: {},
      argv: [],
    });
    expect(app.entry('quiet', 'logger')).toBeInstanceOf(LoggerEntry);
  });

  it('adds plugins to a given registry without changing it', async () => {
    const base = new PluginRegistry();
    base.register(probePlugin('alpha', 100, []));
    const app = await boot({
      registry: base,
      plugins: [probePlugin('beta', 100, [])],
      configText: 'alpha:\n  - name: a\nbeta:\n  - name: b\n',
      env: {},
      argv: [],
    });
    expect(app.entries().map((e) => e.name)).toEqual(['a', 'b']);
    expect(base.keys()).toEqual(['alpha']);
  });

  it('refuses two different plugins for one key, naming both packages', async () => {
    await expect(
      boot({
        plugins: [probePlugin('alpha', 100, []), probePlugin('alpha', 100, [])],
        configText: '',
        env: {},
        argv: [],
      }),
    ).rejects.toThrow(
      /boot.yaml key "alpha" is registered twice: by @svcboot\/probe and by @svcboot\/probe/,
    );
  });
});
