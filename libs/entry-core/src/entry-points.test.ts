import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as app from './index.js';
import * as callLayer from './call-layer.js';
import * as toolkit from './toolkit.js';

/** The names an API report lists: one `export` declaration each (a function's overloads once). */
async function reportNames(report: string): Promise<string[]> {
  const text = await readFile(new URL(`../../../api/${report}`, import.meta.url), 'utf-8');
  const names = text
    .split(/\r?\n/)
    .filter((l) => l.startsWith('export '))
    .map((l) => {
      const renamed = /^export \{ \w+ as (\w+) \}/.exec(l);
      if (renamed) return renamed[1] as string;
      const m =
        /^export (?:declare )?(?:abstract )?(?:const |function |class |interface |type |enum |namespace )?(\w+)/.exec(
          l,
        );
      return m?.[1] ?? l;
    });
  return [...new Set(names)];
}

describe("entry-core's entry points", () => {
  it("'.' (what an app imports) has at most 150 names in its API report", async () => {
    const names = await reportNames('entry-core.api.md');
    expect(names.length).toBeGreaterThan(0);
    expect(names.length).toBeLessThanOrEqual(150);
    // The report is of '.': it lists the app's names, not the library authors'.
    expect(names).toEqual(expect.arrayContaining(['boot', 'runApp', 'App', 'CallContext']));
    expect(names).not.toContain('startCall');
    expect(names).not.toContain('HealthRoutes');
  });

  it('exports each name from one entry point only', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [point, mod] of [
      ['.', app],
      ['./call', callLayer],
      ['./toolkit', toolkit],
    ] as const) {
      for (const name of Object.keys(mod)) {
        const first = seen.get(name);
        if (first !== undefined) twice.push(`${name} (${first} and ${point})`);
        else seen.set(name, point);
      }
    }
    expect(twice).toEqual([]);
    // The library authors' entry points hold the call driver and the server routes.
    expect(typeof callLayer.startCall).toBe('function');
    expect(typeof toolkit.HealthRoutes).toBe('function');
  });
});
