import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REFUSED_IN_PORTING_MODE, REFUSED_IN_STRICT_MODE } from './expected.js';
import { fixtures, load, PORTING_PAGE, type Outcome } from './fixtures.js';
import { REFUSAL_REASONS, reasonOf } from './reasons.js';

const page = readFileSync(PORTING_PAGE, 'utf8');
const all = fixtures();

function refusedFor(outcome: Outcome): string[] {
  if (outcome.loaded) return [];
  return [
    ...new Set(
      outcome.issues.map((i) => reasonOf(i)?.id ?? `unexplained: ${i.path}: ${i.message}`),
    ),
  ].sort();
}

function entryConfig(outcome: Outcome, key: string, name: string): Record<string, unknown> {
  if (!outcome.loaded) throw new Error(`did not load: ${JSON.stringify(outcome.issues)}`);
  const hit = outcome.config.entries.find((e) => e.key === key && e.name === name);
  if (!hit) throw new Error(`no ${key} entry ${name}`);
  return hit.config as unknown as Record<string, unknown>;
}

const byName = (name: string) => {
  const f = all.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
};

describe('the rk-boot fixtures', () => {
  it('are real rk-boot v2 files, each naming its repository and path', () => {
    expect(all.length).toBeGreaterThanOrEqual(100);
    for (const f of all) expect(f.source, f.name).toMatch(/^rookie-ninja\/rk-[a-z]+ \S+/);
  });

  it('cover every entry kind svcboot has, and the app section', () => {
    const keys = new Set(all.flatMap((f) => Object.keys(parse(f.text) as object)));
    for (const kind of [
      'app',
      'grpc',
      'httpserver',
      'kvstore',
      'cache',
      'relationaldb',
      'columnardb',
      'logger',
      'event',
      'cert',
      'config',
    ])
      expect(keys, kind).toContain(kind);
  });

  for (const [mode, expected] of [
    ['rk-boot', REFUSED_IN_PORTING_MODE],
    ['strict', REFUSED_IN_STRICT_MODE],
  ] as const) {
    it(`each loads, or is refused only for a reason the porting page gives (${mode} mode)`, () => {
      const got: Record<string, string[]> = {};
      for (const f of all) {
        const reasons = refusedFor(load(f, mode));
        if (reasons.length > 0) got[f.name] = reasons;
      }
      expect(got).toEqual(expected);
      for (const reasons of Object.values(got))
        for (const id of reasons) {
          expect(page, id).toContain(`<a id="${id}"></a>`);
          const reason = REFUSAL_REASONS.find((r) => r.id === id)!;
          if (mode === 'rk-boot') expect(reason.inPortingMode, id).toBe(true);
        }
    });
  }

  it('most load in the porting mode', () => {
    const loaded = all.filter((f) => load(f, 'rk-boot').loaded).length;
    expect(loaded / all.length).toBeGreaterThan(0.75);
  });
});

describe('rk-boot options accepted with their meaning', () => {
  it("gin's middleware.gzip is compression (gzip only, its level as a number)", () => {
    const c = entryConfig(load(byName('rk-gin--gzip'), 'strict'), 'httpserver', 'greeter');
    expect(c['compression']).toMatchObject({ enabled: true, encodings: ['gzip'], gzipLevel: 1 });
  });

  it("middleware.errorModel is the entry's errorModel", () => {
    const c = entryConfig(
      load(byName('rk-docs--user-guide-web-grpc-error-type-1'), 'strict'),
      'grpc',
      'greeter',
    );
    expect(c['errorModel']).toBe(
      (
        parse(byName('rk-docs--user-guide-web-grpc-error-type-1').text) as {
          grpc: { middleware: { errorModel: string } }[];
        }
      ).grpc[0]!.middleware.errorModel,
    );
  });

  it("grpc's certEntry is tls.certEntry", () => {
    const f = byName('rk-docs--user-guide-web-grpc-tls-1');
    const c = entryConfig(load(f, 'strict'), 'grpc', 'greeter');
    const written = (parse(f.text) as { grpc: { certEntry: string }[] }).grpc[0]!.certEntry;
    expect((c['tls'] as { certEntry: string }).certEntry).toBe(written);
  });

  it('a cache kvstore tier with no addrs connects to localhost:6379', () => {
    const c = entryConfig(load(byName('rk-boot--cache-redis'), 'strict'), 'cache', 'redis-cache');
    expect((c['kvstore'] as { addrs: string[] }).addrs).toEqual(['localhost:6379']);
  });

  it('route paths without "/" (sw, docs, prom) are normalised, empty ones take the default', () => {
    const f = byName('rk-boot--web-grpc-uncommented');
    // The template is refused for its Go-only and unsupported options (and its JWT placeholders):
    // without those, the rest loads.
    const doc = parse(f.text) as Record<string, Record<string, unknown>[]>;
    const logger = doc['logger']![0]!;
    delete (logger['zap'] as Record<string, unknown>)['encoderConfig'];
    delete (logger['zap'] as Record<string, unknown>)['sampling'];
    for (const e of [logger, doc['event']![0]!]) {
      delete e['lumberjack'];
      delete e['loki'];
    }
    delete (doc['grpc']![0]!['middleware'] as Record<string, unknown>)['jwt'];
    const c = entryConfig(load({ ...f, text: stringify(doc) }, 'rk-boot'), 'grpc', 'greeter');
    expect((c['sw'] as { path: string }).path).toBe('/sw/');
    expect((c['docs'] as { path: string }).path).toBe('/docs/');
    expect((c['prom'] as { path: string }).path).toBe('/metrics');
    expect((c['docs'] as { headers: Record<string, string> }).headers).toEqual({ sw: 'rk' });
    expect(c['maxRecvMsgSizeBytes']).toBeGreaterThan(0);
    expect(c['noRecvMsgSizeLimit']).toBe(true);
    const gw = c['gwOption'] as { marshal: { indent: string; multiline: boolean } };
    expect(gw.marshal.multiline).toBe(false);
  });

  it("zap's level, encoding and output paths are the logger entry's", () => {
    const f = byName('rk-docs--user-guide-web-grpc-logging-1');
    const zap = (parse(f.text) as { logger: { zap: Record<string, unknown> }[] }).logger[0]!.zap;
    const c = entryConfig(load(f, 'strict'), 'logger', 'my-logger');
    for (const key of ['level', 'encoding', 'outputPaths'])
      if (zap[key] !== undefined) expect(c[key], key).toEqual(zap[key]);
  });

  it('the app metadata (keywords, homeUrl, docsUrl, maintainers) is kept', () => {
    const f = byName('rk-docs--user-guide-web-grpc-info-1');
    const written = (parse(f.text) as { app: Record<string, unknown> }).app;
    const o = load(f, 'strict');
    if (!o.loaded) throw new Error('did not load');
    expect(o.config.app).toMatchObject({
      keywords: written['keywords'],
      homeUrl: written['homeUrl'],
      docsUrl: written['docsUrl'],
      maintainers: written['maintainers'],
    });
  });

  it('the porting mode turns the keys rk-boot ignores into warnings naming them', () => {
    const o = load(byName('rk-docs--user-guide-web-grpc-mid-tracing-3'), 'rk-boot');
    if (!o.loaded) throw new Error('did not load');
    expect(o.config.warnings.map((w) => [w.path, w.code])).toEqual([
      ['grpc[greeter].middleware.trace.exporter.otpl', 'SVC_PORTING_RK_IGNORED'],
    ]);
  });

  it('a separate gwPort is kept in the porting mode (a second port of the entry) and refused otherwise', () => {
    const ported = load(byName('rk-grpc--simple'), 'rk-boot');
    expect(entryConfig(ported, 'grpc', 'greeter')).toMatchObject({ port: 8080, gwPort: 8081 });
    const strict = load(byName('rk-grpc--simple'), 'strict');
    if (strict.loaded) throw new Error('loaded');
    expect(strict.issues).toEqual([
      expect.objectContaining({
        path: 'grpc[greeter].gwPort',
        code: 'SVC_PORTING_ONE_PORT',
        message: expect.stringContaining('one port'),
      }),
    ]);
  });

  it("rk-db's protocol: tcp is what relationaldb does (dropped); another protocol is refused with the reason", () => {
    const f = byName('rk-docs--user-guide-database-postgres-logging-3');
    for (const mode of ['rk-boot', 'strict'] as const) {
      const o = load(f, mode);
      expect(entryConfig(o, 'relationaldb', 'demo-db'), mode).not.toHaveProperty('protocol');
      if (o.loaded) expect(o.config.warnings, mode).toEqual([]);
    }
    const unix = load({ ...f, text: f.text.replace('protocol: tcp', 'protocol: unix') }, 'rk-boot');
    if (unix.loaded) throw new Error('loaded');
    expect(unix.issues).toEqual([
      expect.objectContaining({
        path: 'relationaldb[demo-db].protocol',
        code: 'SVC_PORTING_UNSUPPORTED',
        message: expect.stringContaining('over TCP at addr'),
      }),
    ]);
  });
});

describe('the porting page', () => {
  it('lists every porting rule of every kind', async () => {
    const { allKinds } = await import('./fixtures.js');
    for (const key of allKinds.keys()) {
      for (const rule of allKinds.get(key)!.porting ?? []) {
        // `*` is written `<any>` under middleware, `[]` for a list, "any other key under `zap`".
        const shown =
          rule.path === 'zap.*'
            ? 'any other key under `zap`'
            : `\`${rule.path.replace('middleware.*.', 'middleware.<any>.').replace('.*.', '[].')}`;
        expect(page, `${key}: ${rule.path}`).toContain(shown);
      }
    }
  });
});
