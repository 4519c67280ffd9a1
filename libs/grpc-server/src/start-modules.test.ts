import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, plainEnv, startOnFreePort } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

interface Report {
  atStart: string[];
  typed: {
    reason?: string;
    statusDetailsBytes: boolean;
    registryKnows?: string;
    statusFields: string[];
  };
  after: string[];
}

const protobufEs = (modules: readonly string[]): string[] =>
  modules.filter((m) => m.includes('@bufbuild/'));

/**
 * From the sources, and from the built package: its dist/ is one bundled file
 * (tools/scripts/bundle-lib.mjs), which must keep grpc-typed's loader of protobuf-es lazy.
 */
describe.each([
  ['the sources', ['--conditions=svcboot-source']],
  ['the built dist/', []],
])('an untyped grpc entry starts without protobuf-es (%s)', (_from, conditions) => {
  it('loads no @bufbuild module until the port accepts; the typed exports of the index load it on first use and work', async () => {
    const { child } = await startOnFreePort(
      (port) => {
        const c = Child.start(
          process.execPath,
          [
            ...conditions,
            '--import',
            'tsx',
            '--import',
            path.join(here, 'test-support/record-modules.mjs'),
            path.join(here, 'test-support/untyped-start-app.ts'),
          ],
          { cwd: path.join(here, '..'), env: plainEnv({ PORT: String(port) }) },
        );
        children.push(c);
        return c;
      },
      { ready: (c) => c.stdout.includes('{"atStart"'), what: 'the module report' },
    );
    expect(await child.exited, child.stdout.slice(-2000)).toBe(0);
    const line = child.stdout.split('\n').find((l) => l.startsWith('{"atStart"'));
    const report = JSON.parse(line ?? '{}') as Report;
    // Recording works: the start resolved grpc-js and the server's own modules.
    expect(report.atStart.some((m) => m.includes('@grpc/grpc-js'))).toBe(true);
    expect(protobufEs(report.atStart)).toEqual([]);
    // Of grpc-js, a native entry's start loads the status codes' module only: Metadata's (with
    // grpc-js's logging and errors) on the first call, the index never (grpc-typed's grpc-js.ts).
    expect(
      report.atStart
        .map((m) => /@grpc\/grpc-js\/(.+)$/.exec(m)?.[1])
        .filter((f) => f !== undefined && f !== 'package.json'),
    ).toEqual(['build/src/constants.js']);
    // A lib's dist/ is its package.js and the files of its entry points; a dist/chunk-*.js file
    // holds what only an import() reaches (bundle-lib.mjs folds the chunks package.js shares
    // with those into package.js), so a start that turns on no such feature loads none.
    expect(report.atStart.filter((m) => /\/dist\/chunk-[^/]*\.js$/.test(m))).toEqual([]);
    if (conditions.length === 0) {
      // Bundled packages import each other's internal modules from `<package>/internal` (their
      // package.js), not from one entry-point file per module: of entry-core, the start loads
      // the app's import (index.js), package.js, and what openapi (not bundled) imports.
      const entryCore = report.atStart
        .map((m) => /\/entry-core\/dist\/(.+)$/.exec(m)?.[1])
        .filter((f) => f !== undefined);
      expect(entryCore.sort()).toEqual(['index.js', 'package.js', 'yaml.js', 'zod.js']);
    }
    // RpcError with a google.rpc detail, the registry and a schema: protobuf-es, loaded then.
    expect(report.typed).toEqual({
      reason: 'SHELF_GONE',
      statusDetailsBytes: true,
      registryKnows: 'google.rpc.ErrorInfo',
      statusFields: ['code', 'message', 'details'],
    });
    expect(protobufEs(report.after).length).toBeGreaterThan(0);
  });
});
