import { describe, expect, it } from 'vitest';
import { boot, ConfigError, defaultRegistry, type PluginRegistry } from '../index.js';
import { probePlugin, type ProbeEntry } from '../test-support/probe-plugin.js';

function registry(): PluginRegistry {
  const r = defaultRegistry.fork();
  r.register(probePlugin('probe', 100, []));
  return r;
}

async function configError(
  yaml: string,
  opts: { env?: Record<string, string>; argv?: string[] } = {},
): Promise<ConfigError> {
  try {
    await boot({
      registry: registry(),
      configText: yaml,
      env: opts.env ?? {},
      argv: opts.argv ?? [],
    });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected boot to fail');
}

async function probe(
  yaml: string,
  opts: { env?: Record<string, string>; argv?: string[] } = {},
  name = 'a',
): Promise<ProbeEntry> {
  const app = await boot({
    registry: registry(),
    configText: yaml,
    env: opts.env ?? {},
    argv: opts.argv ?? [],
  });
  return app.entry<ProbeEntry>(name, 'probe');
}

describe('config errors', () => {
  it('names the package to import for a known but unregistered top-level key', async () => {
    const err = await configError('kvstore:\n  - name: redis\n');
    expect(err.issues).toEqual([
      expect.objectContaining({
        path: 'kvstore',
        line: 1,
        message: expect.stringContaining("import '@svcboot/entry-kv'"),
      }),
    ]);
  });

  it('suggests the closest key for an unknown top-level key', async () => {
    const err = await configError('prboe:\n  - name: a\n');
    expect(err.issues[0]!.message).toContain('did you mean "probe"?');
  });

  it('reports an unknown nested key with its path, position and a suggestion', async () => {
    const err = await configError('probe:\n  - name: a\n    nested:\n      levl: high\n');
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ path: 'probe[a].nested.levl', line: 4, column: 7 });
    expect(err.issues[0]!.message).toContain('unknown key "levl"; did you mean "level"?');
  });

  it('names expected and actual type for a wrong type', async () => {
    const err = await configError('probe:\n  - name: a\n    port: eighty\n');
    expect(err.issues[0]).toMatchObject({ path: 'probe[a].port', line: 3 });
    expect(err.issues[0]!.message).toBe('expected number, got a string "eighty"');
  });

  it('reports a missing required field', async () => {
    const err = await configError('probe:\n  - port: 1\n');
    expect(err.issues[0]!.path).toBe('probe[0].name');
    expect(err.issues[0]!.message).toContain('required field is missing');
  });

  it('gives line and column for YAML syntax errors', async () => {
    const err = await configError('probe:\n  - name: a\n    port: [1, 2\n');
    expect(err.issues[0]!.message).toMatch(/^invalid YAML/);
    expect(err.issues[0]!.line).toBeGreaterThanOrEqual(3);
    expect(err.issues[0]!.column).toBeGreaterThanOrEqual(1);
    expect(err.message).toMatch(/line \d+, column \d+/);
  });

  it('reports an unset ${VAR} without default, naming the variable', async () => {
    const err = await configError('probe:\n  - name: a\n    description: ${NOT_SET_ANYWHERE}\n');
    expect(err.issues[0]).toMatchObject({ path: 'probe[a].description', line: 3 });
    expect(err.issues[0]!.message).toContain('NOT_SET_ANYWHERE is not set and has no default');
  });

  it('reports every problem at once', async () => {
    const err = await configError(
      'probe:\n  - name: a\n    prot: 1\n    port: x\n  - name: b\n    nested: { level: huge }\nnope: 1\n',
    );
    expect(err.issues.map((i) => i.path)).toEqual([
      'probe[a].prot',
      'probe[a].port',
      'probe[b].nested.level',
      'nope',
    ]);
  });

  it('rejects a reference to a logger entry that does not exist', async () => {
    const err = await configError(
      'logger:\n  - name: main\nprobe:\n  - name: a\n    loggerEntry: mian\n',
    );
    expect(err.issues[0]).toMatchObject({ path: 'probe[a].loggerEntry', line: 5 });
    expect(err.issues[0]!.message).toContain('did you mean "main"?');
  });

  it('rejects duplicate names within a kind and domain', async () => {
    const err = await configError('probe:\n  - name: a\n  - name: a\n');
    expect(err.issues[0]!.message).toContain('duplicate probe entry name "a"');
  });

  it('never prints a password, even when its type is wrong or an override misses', async () => {
    const err = await configError('probe:\n  - name: a\n    pass: [s3cr3t-pw]\n    port: x\n', {
      argv: ['--set', 'probe.zz.pass=other-s3cret'],
    });
    expect(err.message).not.toContain('s3cr3t-pw');
    expect(err.message).not.toContain('other-s3cret');
  });
});

describe('interpolation', () => {
  it('substitutes ${VAR} and ${VAR:-default}, typing whole plain scalars', async () => {
    const e = await probe(
      'probe:\n  - name: a\n    port: ${PORT}\n    description: "v${VER:-0}-${NAME:-x}"\n',
      {
        env: { PORT: '8081', NAME: 'svc' },
      },
    );
    expect(e.config.port).toBe(8081);
    expect(e.config.description).toBe('v0-svc');
  });

  it('keeps quoted scalars as strings', async () => {
    const err = await configError('probe:\n  - name: a\n    port: "${PORT}"\n', {
      env: { PORT: '80' },
    });
    expect(err.issues[0]!.message).toContain('expected number, got a string');
  });

  it('does not interpolate entries of other domains', async () => {
    const e = await probe(
      'probe:\n  - name: a\n    domain: prod\n    pass: ${PROD_ONLY}\n  - name: a\n    domain: "*"\n    port: 1\n',
      {
        env: {},
      },
    );
    expect(e.config.port).toBe(1);
  });
});

describe('overrides', () => {
  it('applies --set and SVC_SET by entry name, the command line last', async () => {
    const e = await probe('probe:\n  - name: a\n    port: 1\n    nested: { size: 1 }\n', {
      env: { SVC_SET: 'probe.a.port=2,probe.a.nested.size=5,probe.a.description=x\\,y' },
      argv: ['--set', 'probe.a.port=3'],
    });
    expect(e.config.port).toBe(3);
    expect(e.config.nested.size).toBe(5);
    expect(e.config.description).toBe('x,y');
  });

  it('overrides the app section', async () => {
    const app = await boot({
      registry: registry(),
      configText: 'app:\n  name: one\n',
      env: {},
      argv: ['--set=app.version=9.9'],
    });
    expect(app.info).toMatchObject({ name: 'one', version: '9.9' });
  });

  it('reports an override of an entry that does not exist', async () => {
    const err = await configError('probe:\n  - name: alpha\n', {
      argv: ['--set', 'probe.alhpa.port=2'],
    });
    expect(err.issues[0]).toMatchObject({ path: '--set probe.alhpa.port' });
    expect(err.issues[0]!.message).toContain('did you mean "alpha"?');
  });

  it('validates overridden values like the file', async () => {
    const err = await configError('probe:\n  - name: a\n', { argv: ['--set', 'probe.a.port=abc'] });
    expect(err.issues[0]!.path).toBe('probe[a].port');
  });
});

describe('domain selection', () => {
  const yaml = [
    'probe:',
    '  - name: a',
    '    domain: "*"',
    '    port: 1',
    '  - name: a',
    '    domain: prod',
    '    port: 2',
    '  - name: a',
    '    domain: test',
    '    port: 3',
    '  - name: only-prod',
    '    domain: prod',
    '',
  ].join('\n');

  it('picks the entry whose domain is $DOMAIN', async () => {
    expect((await probe(yaml, { env: { DOMAIN: 'prod' } })).config.port).toBe(2);
    expect((await probe(yaml, { env: { DOMAIN: 'test' } })).config.port).toBe(3);
  });

  it('falls back to * or empty, and drops entries of other domains', async () => {
    const app = await boot({
      registry: registry(),
      configText: yaml,
      env: { DOMAIN: 'staging' },
      argv: [],
    });
    expect(app.entry<ProbeEntry>('a', 'probe').config.port).toBe(1);
    expect(() => app.entry('only-prod', 'probe')).toThrow(/no probe entry named "only-prod"/);
  });
});

describe('entry lookup', () => {
  it('fails clearly on a wrong name, a wrong kind or a disabled entry', async () => {
    const app = await boot({
      registry: registry(),
      configText:
        'probe:\n  - name: alpha\n  - name: off\n    enabled: false\nlogger:\n  - name: log\n',
      env: {},
      argv: [],
    });
    expect(() => app.entry('alpah', 'probe')).toThrow(/did you mean "alpha"/);
    expect(() => app.entry('log', 'probe')).toThrow(/is a logger entry, not probe/);
    expect(() => app.entry('off', 'probe')).toThrow(/disabled/);
  });
});
