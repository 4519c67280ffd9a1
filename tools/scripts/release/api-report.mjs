#!/usr/bin/env node
// API reports: for each publishable package, API Extractor reads the built declaration entry
// (exports["."].types, so build first) and writes the public surface to api/<name>.api.md, and
// for each further export subpath with types (entry-core's "./call") to api/<name>.<subpath>.api.md. The
// committed reports are the record of each package's public API: a change to a surface shows in
// the diff. Without --update, a report that differs from the built surface (or is missing) fails,
// naming the command that refreshes it.
//
//   node tools/scripts/release/api-report.mjs [--update] [folder...]
//
// API Extractor runs with `npx --yes` at a pinned version (it brings its own TypeScript compiler
// API, which the workspace's TypeScript 7 does not have); nothing is added to node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { publishablePackages, root, unscopedName } from './packages.mjs';

export const API_EXTRACTOR = '@microsoft/api-extractor@7.60.1';
const UPDATE_COMMAND = 'bash tools/scripts/release-check.sh --update-api';

const args = process.argv.slice(2);
const update = args.includes('--update');
const only = args.filter((a) => !a.startsWith('--'));
const reportFolder = path.join(root, 'api');
const packages = publishablePackages().filter((p) => only.length === 0 || only.includes(p.dir));

/**
 * The package's entry points that have declarations: "." (exports["."].types, else "types") and
 * each further export subpath with a `types` target, each with the name of its report.
 */
function entryPoints(p) {
  const exportsField = p.manifest.exports ?? {};
  const dot = exportsField['.'];
  const points = [
    {
      subpath: '.',
      types: (typeof dot === 'object' ? dot.types : undefined) ?? p.manifest.types,
      report: unscopedName(p.name),
    },
  ];
  for (const [subpath, value] of Object.entries(exportsField)) {
    if (subpath === '.' || typeof value !== 'object' || value === null) continue;
    if (typeof value.types !== 'string') continue;
    points.push({
      subpath,
      types: value.types,
      report: `${unscopedName(p.name)}.${subpath.replace(/^\.\//, '').replaceAll('/', '-')}`,
    });
  }
  return points;
}

function config(p, point, tmp) {
  const entry = path.join(root, p.dir, point.types);
  return {
    $schema:
      'https://developer.microsoft.com/json-schemas/api-extractor/v7/api-extractor.schema.json',
    projectFolder: path.join(root, p.dir),
    mainEntryPointFilePath: entry,
    bundledPackages: [],
    compiler: {
      // Not the package's tsconfig: its svcboot-source condition would resolve the other
      // packages to their sources; as a user's compiler, resolve them to their published types.
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: [entry],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: point.report,
      reportFolder,
      reportTempFolder: tmp,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // Findings go into the report (reviewed in its diff), not into CI failures.
      compilerMessageReporting: { default: { logLevel: 'warning' } },
      extractorMessageReporting: {
        default: { logLevel: 'none', addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
      },
      tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
    },
  };
}

const failed = [];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svcboot-api-'));
try {
  for (const p of packages)
    for (const point of entryPoints(p)) {
      const entry = point.types;
      const where = point.subpath === '.' ? p.name : `${p.name} ${point.subpath}`;
      if (!entry || !existsSync(path.join(root, p.dir, entry))) {
        failed.push(`${where}: no built declaration entry ${entry ?? '(exports["."].types)'}`);
        continue;
      }
      // API Extractor takes the package from the package.json above its config file: the config
      // goes into the package's node_modules/.cache (ignored by git, never packed).
      const cache = path.join(root, p.dir, 'node_modules', '.cache', 'api-extractor');
      mkdirSync(cache, { recursive: true });
      const file = path.join(cache, 'api-extractor.json');
      writeFileSync(file, JSON.stringify(config(p, point, tmp), null, 2));
      const run = spawnSync(
        'npx',
        ['--yes', API_EXTRACTOR, 'run', '--config', file, ...(update ? ['--local'] : [])],
        { cwd: path.join(root, p.dir), encoding: 'utf-8' },
      );
      const out = `${run.stdout}${run.stderr}`;
      const report = `api/${point.report}.api.md`;
      if (run.status === 0) {
        console.log(`api report ${report}: ${update ? 'written' : 'up to date'}`);
      } else {
        console.error(out.trim());
        const fresh = path.join(tmp, `${point.report}.api.md`);
        if (!update && existsSync(fresh) && existsSync(path.join(root, report))) {
          const diff = spawnSync('diff', ['-u', report, fresh], { cwd: root, encoding: 'utf-8' });
          console.error(diff.stdout.split('\n').slice(0, 200).join('\n'));
        }
        failed.push(
          update
            ? `${where}: API Extractor failed (above)`
            : `${where}: ${report} does not match the built public API (the diff: ` +
                `diff ${report} ${path.join(tmp, `${point.report}.api.md`)}); ` +
                `if the change is meant, run \`${UPDATE_COMMAND}\` and commit ${report}`,
        );
      }
    }
  // A report whose package is gone (renamed, made private) is stale too.
  if (only.length === 0 && existsSync(reportFolder)) {
    const expected = new Set(
      packages.flatMap((p) => entryPoints(p).map((point) => `${point.report}.api.md`)),
    );
    for (const f of readdirSync(reportFolder)) {
      if (!f.endsWith('.api.md') || expected.has(f)) continue;
      if (update) {
        rmSync(path.join(reportFolder, f));
        console.log(
          `api report api/${f}: removed (no publishable package or export subpath of that name)`,
        );
      } else {
        failed.push(
          `api/${f}: no publishable package (or export subpath) of that name; delete it (${UPDATE_COMMAND})`,
        );
      }
    }
  }
} finally {
  if (failed.length === 0) rmSync(tmp, { recursive: true, force: true });
}
if (failed.length > 0) {
  console.error(`\nAPI reports: ${failed.length} problem(s):\n- ${failed.join('\n- ')}`);
  process.exit(1);
}
