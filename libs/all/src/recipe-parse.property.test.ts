// boot.yaml's quick parse (entry-core config/recipe-parse.ts: the schemas' recipes read without
// building zod's schemas) held to zod's own parse of the same schemas, for every entry kind and
// middleware svcboot ships: on every boot.yaml item of the repository's YAML files and Markdown
// blocks, and on random changes of them. Where zod accepts a value, the quick parse gives zod's
// output, keys in zod's order, or leaves it to zod; where zod refuses one, it always leaves it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultRegistry } from '@svcboot/entry-core';
import { appSchema } from '@svcboot/entry-core/internal/config/load';
import { parseByRecipe } from '@svcboot/entry-core/internal/config/recipe-parse';
import { built } from '@svcboot/entry-core/internal/zod-recipe';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { allPlugins } from './index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every .yaml / .yml file of the repository and every ```yaml block of its Markdown, parsed. */
function corpus(): Array<{ where: string; doc: unknown }> {
  const out: Array<{ where: string; doc: unknown }> = [];
  const skip = (name: string): boolean =>
    name.startsWith('.') || name === 'node_modules' || name === 'dist' || name === 'coverage';
  const add = (where: string, text: string): void => {
    try {
      out.push({ where, doc: parseYaml(text, { logLevel: 'silent' }) });
    } catch {
      // Not YAML the library reads (a template, a fragment): nothing to compare.
    }
  };
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (skip(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) add(path.relative(root, p), readFileSync(p, 'utf8'));
      else if (e.name.endsWith('.md')) {
        let k = 0;
        for (const m of readFileSync(p, 'utf8').matchAll(/^```ya?ml\n([\s\S]*?)^```/gm))
          add(`${path.relative(root, p)} block ${++k}`, m[1]!);
      }
    }
  };
  walk(root);
  return out;
}

interface Item {
  where: string;
  schema: unknown;
  value: unknown;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The boot.yaml items (each entry kind's list items, and `app`) of every document of the corpus. */
function items(): Item[] {
  expect(allPlugins.length).toBeGreaterThan(0); // every kind registered
  const out: Item[] = [];
  for (const { where, doc } of corpus()) {
    if (!isMap(doc)) continue;
    for (const [key, value] of Object.entries(doc)) {
      if (key === 'app' && isMap(value))
        out.push({ where: `${where} app`, schema: appSchema, value });
      const plugin = defaultRegistry.get(key);
      if (!plugin || !Array.isArray(value)) continue;
      value.forEach((v, i) => {
        out.push({ where: `${where} ${key}[${i}]`, schema: plugin.schema, value: v });
      });
    }
  }
  return out;
}

/** The quick parse and zod's, each on its own copy; asserts they agree. */
function compare(item: Item): { zodAccepts: boolean; quick: boolean } {
  const quick = parseByRecipe(item.schema, structuredClone(item.value));
  const zod = (
    built(item.schema) as { safeParse(v: unknown): { success: boolean; data?: unknown } }
  ).safeParse(structuredClone(item.value));
  if (!zod.success) {
    expect(
      quick,
      `${item.where}: zod refuses it, the quick parse must leave it to zod`,
    ).toBeUndefined();
  } else if (quick !== undefined) {
    expect(quick.data, item.where).toStrictEqual(zod.data);
    expect(JSON.stringify(quick.data), `${item.where}: key order`).toBe(JSON.stringify(zod.data));
  }
  return { zodAccepts: zod.success, quick: quick !== undefined };
}

describe("boot.yaml's quick parse against zod's", () => {
  const all = items();

  it("gives zod's output for every item of the repository's YAML zod accepts, and parses them all", () => {
    expect(all.length).toBeGreaterThan(100);
    const leftToZod: string[] = [];
    let accepted = 0;
    for (const item of all) {
      const r = compare(item);
      if (r.zodAccepts) accepted++;
      if (r.zodAccepts && !r.quick) leftToZod.push(item.where);
    }
    expect(accepted).toBeGreaterThan(50);
    // A start takes the quick path for every valid item the docs and demos show.
    expect(leftToZod).toEqual([]);
  });

  it('agrees with zod on random changes of those items', () => {
    const valid = all.filter((item) => compare(item).zodAccepts);
    /** A path into `value` (keys and indexes), chosen by `picks`. */
    const pathIn = (value: unknown, picks: number[]): Array<string | number> => {
      const out: Array<string | number> = [];
      let node = value;
      for (const p of picks) {
        const keys = Array.isArray(node)
          ? node.map((_, i) => i)
          : isMap(node)
            ? Object.keys(node)
            : [];
        if (keys.length === 0) break;
        const k = keys[p % keys.length]!;
        out.push(k);
        node = (node as Record<string | number, unknown>)[k];
      }
      return out;
    };
    const change = fc.record({
      item: fc.nat({ max: valid.length - 1 }),
      picks: fc.array(fc.nat(), { maxLength: 4 }),
      kind: fc.constantFrom('set', 'delete', 'add', 'emptyMap', 'wrap'),
      value: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom('', '/x', 'x/', 'LAX', 'none', 0, -1, 1.5, 65536, true, null, [], {}),
      ),
      key: fc.constantFrom('enabled', 'name', 'port', 'path', 'ignore', 'unknownKey', 'level', 'x'),
    });
    fc.assert(
      fc.property(change, ({ item, picks, kind, value, key }) => {
        const base = valid[item]!;
        const copy = structuredClone(base.value) as unknown;
        const at = pathIn(copy, picks);
        let parent: unknown = copy;
        for (const seg of at.slice(0, -1))
          parent = (parent as Record<string | number, unknown>)[seg];
        const last = at[at.length - 1];
        const target =
          last === undefined ? copy : (parent as Record<string | number, unknown>)[last];
        if (kind === 'set' && last !== undefined)
          (parent as Record<string | number, unknown>)[last] = value;
        else if (kind === 'delete' && last !== undefined && isMap(parent))
          delete parent[last as string];
        else if (kind === 'add' && isMap(target)) target[key] = value;
        else if (kind === 'emptyMap' && last !== undefined)
          (parent as Record<string | number, unknown>)[last] = {};
        else if (kind === 'wrap' && last !== undefined)
          (parent as Record<string | number, unknown>)[last] = [target];
        compare({
          where: `${base.where} (${kind} at ${at.join('.')})`,
          schema: base.schema,
          value: copy,
        });
      }),
      { numRuns: 3000 },
    );
  });
});
