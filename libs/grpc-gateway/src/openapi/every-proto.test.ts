import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocuments, type OpenApiDocument } from '@svcboot/openapi';
import { bufBinary } from '@svcboot/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.resolve(here, '..', '..');
const repo = path.resolve(lib, '..', '..');
/** buf, the pinned release testkit installs once outside the repository, as descriptor-set.test.ts runs it. */
const buf = await bufBinary();

interface Tree {
  root: string;
  includeDirs: string[];
  /** Only this folder of the tree holds the service protos (the rest are vendored imports). */
  under?: string;
  /** Protos protobufjs cannot parse: the suites compile them with buf into a descriptor set. */
  descriptorSet?: boolean;
}

/**
 * The proto trees the test suites load into a grpc entry, each with the include dirs its imports
 * resolve against. Every `.proto` under a tree that declares a service is documented.
 */
const trees: Tree[] = [
  { root: path.join(repo, 'libs/grpc-server/src/test-support/protos'), includeDirs: ['.'] },
  {
    root: path.join(repo, 'libs/grpc-server/src/test-support/descriptor-set'),
    includeDirs: [],
    descriptorSet: true,
  },
  { root: path.join(lib, 'src/conformance/testdata'), includeDirs: ['.'] },
  {
    root: path.join(repo, 'apps/demo-grpc'),
    includeDirs: ['api', 'third-party/googleapis'],
    under: 'api',
  },
];

/**
 * Protos grpc-gateway's generators refuse, as the entry does: building them must fail with the reason.
 * bad.proto binds a path variable to a message field (the gateway refuses the rule at bootstrap,
 * protoc-gen-openapiv2 refuses the path parameter; @svcboot/openapi builds without the gateway,
 * so the generator's refusal is the one seen); the other two
 * have a GET rule whose request message recurs through a message field, so protoc-gen-openapiv2
 * runs out of recursion depth listing its query parameters (template.go's nestedQueryParams).
 */
const refused: Record<string, RegExp> = {
  'conformance/v1/bad.proto':
    /conformance\.v1\.Bad\.Get \(google\.api\.http\): path parameter nested is a message; only scalar, enum and well-known types can be path parameters/,
  'conformance/v1/conformance.proto':
    /exceeded the recursion depth \(1000\) for query parameter nested\.(child\.)+child of type conformance\.v1\.Nested/,
  'test/openapi/recursive.proto':
    /exceeded the recursion depth \(1000\) for query parameter next\.(next\.)+next of type test\.recursive\.Node/,
};

function protosUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.proto'))
    .sort();
}

/** A file declaring no service only defines messages or options (annotations.proto, openapiv2.proto...). */
const hasService = (file: string): boolean =>
  /^\s*service\s+\w+\s*\{/m.test(readFileSync(file, 'utf8'));

const cases = trees.flatMap((t) => {
  const base = t.under ? path.join(t.root, t.under) : t.root;
  return protosUnder(base)
    .filter((f) => hasService(path.join(base, f)))
    .map((f) => ({ tree: t, file: path.relative(t.root, path.join(base, f)) }));
});

async function expectValid(
  doc: OpenApiDocument,
  specification: 'Swagger' | 'OpenAPI',
  what: string,
): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  if (!result.valid)
    throw new Error(`${what}: not a valid OpenAPI document:\n${compileErrors(result)}`);
  expect(result.specification, what).toBe(specification);
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'svcboot-every-proto-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The `protos` section an entry would be given for one proto of a tree. */
function protosFor(
  tree: Tree,
  file: string,
): { files?: string[]; includeDirs?: string[]; descriptorSets?: string[] } {
  if (!tree.descriptorSet) return { files: [file], includeDirs: tree.includeDirs };
  const set = path.join(tmp, `${file.replaceAll('/', '_')}.binpb`);
  execFileSync(buf, ['build', tree.root, '--path', path.join(tree.root, file), '-o', set], {
    stdio: 'pipe',
  });
  return { descriptorSets: [set] };
}

describe('OpenAPI documents of every proto the test suites load', () => {
  it('finds the protos of every tree (a moved tree must fail here, not silently test nothing)', () => {
    for (const t of trees)
      expect(
        cases.some((c) => c.tree === t),
        t.root,
      ).toBe(true);
    expect(cases.length).toBeGreaterThanOrEqual(8);
  });

  it.each(cases.map((c) => [path.relative(repo, path.join(c.tree.root, c.file)), c] as const))(
    '%s: both documents are built and valid (or refused as the generator refuses it)',
    async (_name, { tree, file }) => {
      const warnings: string[] = [];
      const built = buildOpenApiDocuments({
        protos: protosFor(tree, file),
        generateUnboundMethods: true,
        appName: 'every-proto',
        appVersion: '1.0.0',
        baseDir: tree.root,
        warn: (m) => warnings.push(m),
      });
      const refusal = refused[file];
      if (refusal) {
        await expect(built).rejects.toThrow(refusal);
        return;
      }
      const docs = await built;
      expect(warnings).toEqual([]);
      expect(docs.v3Error).toBeUndefined();
      const paths = Object.keys((docs.v2['paths'] ?? {}) as Record<string, unknown>);
      expect(paths.length, `${file}: no paths`).toBeGreaterThan(0);
      await expectValid(docs.v2, 'Swagger', `${file} (2.0)`);
      expect(docs.v3, `${file}: no 3.1 document`).toBeDefined();
      await expectValid(docs.v3!, 'OpenAPI', `${file} (3.1)`);
      expect(docs.v3!['openapi']).toBe('3.1.0');
    },
  );
});
