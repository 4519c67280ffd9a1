import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { optionsTable } from './markdown.js';

const repo = fileURLToPath(new URL('../../../..', import.meta.url));

test("entry-cache's README carries the table svc schema --markdown cache writes from boot.schema.json", async () => {
  // boot.schema.json is checked up to date with the zod schemas by boot-schema.e2e.test.ts.
  const schema = JSON.parse(await readFile(path.join(repo, 'boot.schema.json'), 'utf8')) as unknown;
  const readme = await readFile(path.join(repo, 'libs', 'entry-cache', 'README.md'), 'utf8');
  const begin = '<!-- svc schema --markdown cache: begin -->\n';
  const end = '\n<!-- svc schema --markdown cache: end -->';
  const from = readme.indexOf(begin);
  expect(from, 'the README has the generated block').toBeGreaterThan(0);
  const shown = readme.slice(from + begin.length, readme.indexOf(end, from));
  const table = optionsTable(schema, 'cache');
  expect(
    shown,
    'run `svc schema --markdown cache` at the root and paste it between the markers',
  ).toBe(table);
  expect(table).toContain('| `local.ttlMin` | number | `60` |');
  expect(table).toContain('| `kvstore.addrs` | string[] | required |');
});

test('nested objects and lists of objects are flattened; ${VAR} strings and null are no types', () => {
  const interp = { type: 'string', pattern: '\\$\\{[A-Za-z_]*\\}' };
  const schema = {
    properties: {
      thing: {
        anyOf: [
          {
            type: 'array',
            items: {
              type: 'object',
              required: ['name'],
              properties: {
                name: { type: 'string', description: 'Its name | unique' },
                port: { anyOf: [{ type: 'integer' }, interp], default: 8080 },
                mode: { enum: ['a', 'b'], default: 'a' },
                tls: {
                  type: 'object',
                  properties: { enabled: { type: 'boolean', default: false } },
                },
                db: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['id'],
                    properties: { id: { type: 'string' } },
                  },
                },
              },
            },
          },
          { type: 'null' },
        ],
      },
    },
  };
  expect(optionsTable(schema, 'thing').split('\n')).toEqual([
    '| Option | Type | Default | Meaning |',
    '|---|---|---|---|',
    '| `name` | string | required | Its name \\| unique |',
    '| `port` | number | `8080` |  |',
    '| `mode` | "a" \\| "b" | `"a"` |  |',
    '| `tls` | object |  |  |',
    '| `tls.enabled` | boolean | `false` |  |',
    '| `db` | object[] |  |  |',
    '| `db[].id` | string | required |  |',
  ]);
  expect(() => optionsTable(schema, 'other')).toThrow(
    'svc schema --markdown: boot.yaml has no kind "other" here; the kinds installed are thing',
  );
});
