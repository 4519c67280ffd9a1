import { describe, expect, it } from 'vitest';
import { boot } from '../index.js';
import type { ConfigError } from '../errors.js';
import { applyPortingRules, portingModeOf, type PortingRule } from './porting.js';
import { loggerPortingRules, serverPortingRules } from './porting-rules.js';

describe('applyPortingRules', () => {
  const rules: PortingRule[] = [
    { path: 'middleware.errorModel', action: 'move', to: 'errorModel', why: 'moved' },
    { path: 'old', action: 'ignore', why: 'nothing to do' },
    { path: 'typo', action: 'rkIgnored', why: 'rk-boot ignores it' },
    {
      path: 'proxy',
      action: 'refuse',
      code: 'SVC_PORTING_GO_ONLY',
      offIsNoop: true,
      why: 'Go-only',
    },
    { path: 'database.*.plugins', action: 'refuse', code: 'SVC_PORTING_GO_ONLY', why: 'gorm' },
  ];

  it("moves, warns, refuses, and leaves the caller's value alone", () => {
    const raw = {
      middleware: { errorModel: 'amazon', logging: { enabled: true } },
      old: 1,
      proxy: { enabled: true },
      database: [{ name: 'a' }, { name: 'b', plugins: { prom: { enabled: true } } }],
    };
    const before = structuredClone(raw);
    const r = applyPortingRules(raw, rules, 'strict');
    expect(raw).toEqual(before);
    expect(r.value).toEqual({
      middleware: { logging: { enabled: true } },
      errorModel: 'amazon',
      database: [{ name: 'a' }, { name: 'b' }],
    });
    expect(r.warnings.map((w) => [w.path, w.code])).toEqual([[['old'], 'SVC_PORTING_IGNORED']]);
    expect(r.errors.map((e) => [e.path, e.code])).toEqual([
      [['proxy'], 'SVC_PORTING_GO_ONLY'],
      [['database', 1, 'plugins'], 'SVC_PORTING_GO_ONLY'],
    ]);
  });

  it('refuses both places with different values, and drops a disabled Go-only block', () => {
    const r = applyPortingRules(
      { middleware: { errorModel: 'amazon' }, errorModel: 'google', proxy: { enabled: false } },
      rules,
      'strict',
    );
    expect(r.errors.map((e) => e.code)).toEqual(['SVC_PORTING_CONFLICT']);
    expect(r.value).toEqual({ middleware: {}, errorModel: 'google' });
  });

  it('a key rk-boot ignores is an error in strict mode and a warning in the porting mode', () => {
    const strict = applyPortingRules({ typo: 1 }, rules, 'strict');
    expect(strict.errors[0]).toMatchObject({ code: 'SVC_PORTING_RK_IGNORED' });
    expect(strict.errors[0]!.message).toContain('app.porting: rk-boot');
    const porting = applyPortingRules({ typo: 1 }, rules, 'rk-boot');
    expect([porting.errors, porting.value]).toEqual([[], {}]);
    expect(porting.warnings[0]).toMatchObject({ path: ['typo'], code: 'SVC_PORTING_RK_IGNORED' });
  });

  it("normalises rk-boot's route paths and drops its empty placeholders", () => {
    const r = applyPortingRules(
      {
        sw: { path: 'sw' },
        prom: { path: '' },
        middleware: { ignore: [''], auth: { ignore: ['', '/v1/login'] } },
      },
      serverPortingRules,
      'strict',
    );
    expect(r.value).toEqual({
      sw: { path: '/sw' },
      prom: {},
      middleware: { ignore: [], auth: { ignore: ['/v1/login'] } },
    });
  });

  it("moves zap's options onto the logger entry and drops the empty zap block", () => {
    const r = applyPortingRules(
      { name: 'l', zap: { level: 'debug', encoding: 'json', outputPaths: ['', 'stdout'] } },
      loggerPortingRules,
      'strict',
    );
    expect(r.value).toEqual({
      name: 'l',
      level: 'debug',
      encoding: 'json',
      outputPaths: ['stdout'],
    });
    expect([r.errors, r.warnings]).toEqual([[], []]);
  });

  it('the file wins over SVC_PORTING, which wins over the boot option', () => {
    expect(portingModeOf('strict', { SVC_PORTING: 'rk-boot' }, 'rk-boot')).toBe('strict');
    expect(portingModeOf(undefined, { SVC_PORTING: 'rk-boot' }, 'strict')).toBe('rk-boot');
    expect(portingModeOf(undefined, {}, 'rk-boot')).toBe('rk-boot');
    expect(portingModeOf(undefined, {}, undefined)).toBe('strict');
  });
});

describe('suggestions at every depth', () => {
  const issuesOf = async (configText: string) =>
    (
      (await boot({ argv: [], env: {}, configText }).then(
        () => undefined,
        (e: unknown) => e,
      )) as ConfigError
    ).issues;

  it('an unknown key names the keys allowed there and a close one, in the app section and entries', async () => {
    const issues = await issuesOf(
      'app:\n  keyword: [a]\nlogger:\n  - name: l\n    zap: { levl: info }\n',
    );
    expect(issues.map((i) => [i.path, i.message])).toEqual([
      [
        'app.keyword',
        expect.stringMatching(
          /unknown key "keyword"; did you mean "keywords"\? \(allowed: .*maintainers/,
        ),
      ],
      ['logger[l].zap.levl', expect.stringMatching(/^not one of zap's options \(level, /)],
    ]);
  });

  it('under middleware, in a middleware, and in a list item inside it', async () => {
    const { middlewareSchema } = await import('../middleware/options.js');
    const { toConfigIssues } = await import('./zod-issues.js');
    const { YamlSource } = await import('./yaml-source.js');
    const value = {
      middlware: {},
      cors: { enabled: true, allowOrigin: ['*'] },
      rateLimit: { paths: [{ path: '/v1', reqPersec: 1 }] },
    };
    const parsed = middlewareSchema.safeParse(value);
    if (parsed.success) throw new Error('parsed');
    const source = YamlSource.parse('boot.yaml', '{}').source!;
    const issues = toConfigIssues(
      parsed.error,
      middlewareSchema,
      value,
      ['middleware'],
      undefined,
      source,
    );
    expect(issues.map((i) => [i.path, i.message])).toEqual(
      expect.arrayContaining([
        [
          'middleware.middlware',
          expect.stringMatching(
            /^unknown key "middlware" \(allowed: ignore, logging, prom, meta, /,
          ),
        ],
        [
          'middleware.cors.allowOrigin',
          expect.stringMatching(/did you mean "allowOrigins"\? \(allowed: /),
        ],
        [
          'middleware.rateLimit.paths[0].reqPersec',
          expect.stringMatching(/did you mean "reqPerSec"\? \(allowed: path, reqPerSec, burst\)/),
        ],
      ]),
    );
  });

  it('a Go-only option carries its code and says so', async () => {
    const issues = await issuesOf('logger:\n  - name: l\n    zap: { sampling: { initial: 1 } }\n');
    expect(issues).toEqual([
      expect.objectContaining({
        path: 'logger[l].zap.sampling',
        code: 'SVC_PORTING_GO_ONLY',
        message: expect.stringContaining('Go-only'),
      }),
    ]);
  });
});
