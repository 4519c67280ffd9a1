import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SOURCE_NODE_ARGS } from '../pb/test-support/served.js';
import { SCHEMA_FILE } from './boot-schema.js';

// boot.yaml's JSON Schema (`svc schema`), checked with a real JSON Schema validator (ajv,
// draft 2020-12): the committed file is what `svc schema` writes from this checkout, every
// demo's boot.yaml passes it, and misspelt keys at any depth are flagged.

const repo = path.resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
const cliDir = path.join(repo, 'tools/cli');
let tmp: string;
let text: string;
let validate: ValidateFunction;

/**
 * `svc <args>` in a process of its own, as a user runs it: the schema is made from the middleware
 * definitions that process registers, not from what other test files left in a shared worker.
 */
function svc(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...SOURCE_NODE_ARGS, path.join(cliDir, 'src/bin.ts'), ...args],
      { cwd },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        if (code === -1) reject(error);
        else resolve({ code, out: stdout.trim(), err: stderr.trim() });
      },
    );
  });
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-schema-'));
  const made = await svc(['schema', '--out', path.join(tmp, SCHEMA_FILE)], repo);
  expect(made.err).toBe('');
  expect(made.code).toBe(0);
  text = await readFile(path.join(tmp, SCHEMA_FILE), 'utf8');
  // strict: an unknown keyword or format in the generated schema is an error here.
  validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(
    JSON.parse(text),
  );
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const errorsOf = (doc: unknown): ErrorObject[] =>
  validate(doc) ? [] : [...(validate.errors ?? [])];
const unknownKeys = (doc: unknown): string[] =>
  errorsOf(doc)
    .filter((e) => e.keyword === 'additionalProperties')
    .map((e) => `${e.instancePath}/${String(e.params['additionalProperty'])}`);

test('the committed boot.schema.json is what `svc schema` writes from this checkout', async () => {
  const committed = await readFile(path.join(repo, SCHEMA_FILE), 'utf8');
  // When this fails after a schema change: run `npx svc schema --out boot.schema.json` at the
  // root (biome then formats it: the documents are compared, not their layout).
  expect(JSON.parse(committed)).toEqual(JSON.parse(text));
});

test('`svc schema` prints the same document to stdout, with every installed kind and the built-ins', async () => {
  const printed = await svc(['schema'], repo);
  expect(printed.code).toBe(0);
  expect(`${printed.out}\n`).toBe(text);
  const schema = JSON.parse(text) as {
    properties: Record<string, unknown>;
    additionalProperties: boolean;
  };
  expect(Object.keys(schema.properties).sort()).toEqual([
    'app',
    'cache',
    'cert',
    'columnardb',
    'config',
    'event',
    'grpc',
    'grpcclient',
    'httpclient',
    'httpserver',
    'kvstore',
    'logger',
    'relationaldb',
  ]);
  expect(schema.additionalProperties).toBe(false);
});

const demos = readdirSync(path.join(repo, 'apps')).filter((d) =>
  readdirSync(path.join(repo, 'apps', d)).includes('boot.yaml'),
);

describe.each(demos)('apps/%s/boot.yaml', (demo) => {
  test('is valid for the schema', () => {
    const doc = parse(readFileSync(path.join(repo, 'apps', demo, 'boot.yaml'), 'utf8'));
    expect(errorsOf(doc)).toEqual([]);
  });
});

test('there are demos to check', () => {
  expect(demos.length).toBeGreaterThanOrEqual(7);
});

test('misspelt keys are flagged at the top, in an entry, and deep under middleware', () => {
  const doc = parse(readFileSync(path.join(repo, 'apps', 'demo-grpc', 'boot.yaml'), 'utf8')) as {
    grpc: Array<Record<string, unknown>>;
  } & Record<string, unknown>;
  expect(unknownKeys(doc)).toEqual([]);
  const grpc = doc.grpc[0]!;
  doc['kvstores'] = [];
  grpc['enableReflections'] = true;
  grpc['middleware'] = { jwt: { enabled: true, tokenLookups: 'header:Authorization' } };
  expect(unknownKeys(doc).sort()).toEqual([
    '/grpc/0/enableReflections',
    '/grpc/0/middleware/jwt/tokenLookups',
    '/kvstores',
  ]);
});

test('types are checked, and a ${VAR} stands for any scalar', () => {
  const ok = {
    grpc: [
      {
        name: 'g',
        port: '${GRPC_PORT:-8080}',
        enableReflection: '${REFLECT}',
        errorModel: '${MODEL:-google}',
      },
    ],
  };
  expect(errorsOf(ok)).toEqual([]);
  const bad = { grpc: [{ name: 'g', port: 'eighty', errorModel: 'gRPC' }] };
  expect(errorsOf(bad).map((e) => e.instancePath)).toEqual(
    expect.arrayContaining(['/grpc/0/port', '/grpc/0/errorModel']),
  );
  expect(errorsOf({ grpc: [{ port: 8080 }] }).map((e) => e.message)).toContain(
    "must have required property 'name'",
  );
});

test("porting's options are described as written: middleware.ignore (spread by a transform), rotation, gateway marshal, UI headers, the config kind", () => {
  const ok = {
    app: { name: 'svc', porting: 'rk-boot', keywords: ['a'], docsUrl: 'https://example.com' },
    logger: [
      {
        name: 'l',
        default: true,
        initialFields: { team: 'x' },
        lumberjack: { maxsize: 10, compress: true },
      },
    ],
    config: [{ name: 'c', path: 'config/values.yaml', envPrefix: 'APP', optional: true }],
    grpc: [
      {
        name: 'g',
        middleware: { ignore: ['/sw/'], meta: { prefix: 'Rk' } },
        gwOption: { marshal: { multiline: true }, unmarshal: { allowPartial: true } },
        sw: { enabled: true, headers: ['Cache-Control:no-store'] },
        docs: { style: { theme: 'dark' } },
        noRecvMsgSizeLimit: true,
      },
    ],
  };
  expect(errorsOf(ok)).toEqual([]);
  const bad = {
    logger: [{ name: 'l', lumberjack: { maxsizes: 10 } }],
    config: [{ name: 'c', paths: ['x'] }],
    grpc: [{ name: 'g', middleware: { ignores: [] } }],
  };
  expect(unknownKeys(bad).sort()).toEqual([
    '/config/0/paths',
    '/grpc/0/middleware/ignores',
    '/logger/0/lumberjack/maxsizes',
  ]);
});

test('options carry their default and description, for editors', () => {
  const schema = JSON.parse(text) as {
    properties: Record<
      string,
      {
        anyOf: Array<{
          items?: { properties: Record<string, { default?: unknown; description?: string }> };
        }>;
      }
    >;
  };
  const grpc = schema.properties['grpc']!.anyOf[0]!.items!.properties;
  expect(grpc['port']!.default).toBe(8080);
  expect(grpc['port']!.description).toMatch(/port/i);
  expect(grpc['errorModel']!.default).toBe('grpcGateway');
  expect(grpc['errorModel']!.description).toContain('google');
  const kv = schema.properties['kvstore']!.anyOf[0]!.items!.properties;
  for (const [key, option] of Object.entries(grpc))
    expect(option.description, `grpc.${key}`).toBeTruthy();
  for (const [key, option] of Object.entries(kv))
    expect(option.description, `kvstore.${key}`).toBeTruthy();
});

test('a project without @svcboot/entry-core is told to install it, with the code', async () => {
  const bare = path.join(tmp, 'bare');
  await mkdir(bare);
  await writeFile(path.join(bare, 'package.json'), '{"name":"bare"}');
  const made = await svc(['schema'], bare);
  expect(made.code).toBe(1);
  expect(made.err).toMatch(
    /^svc schema: cannot load @svcboot\/entry-core from .*bare .*; run npm install there .* \[SVC_CLI_ENTRY_CORE_MISSING\]$/,
  );
});
