import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectMachine, type Machine } from './machine.js';
import { PlanError, STAGING, describePlan, planInstall, planTool } from './plan.js';
import { BUNDLES, TOOLS } from './tools.js';

// Machines are made from fake PATH folders holding executables of the right names: the planner
// is given what detectMachine finds there, as on a real machine.

let root: string;
const machines: Record<'withGo' | 'withoutGo' | 'debian' | 'bare', Machine> = {} as never;

async function fakePath(name: string, commands: readonly string[]): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  for (const c of commands) {
    const f = path.join(dir, c);
    await writeFile(f, '#!/bin/sh\nexit 0\n');
    await chmod(f, 0o755);
  }
  // A non-executable `go` must not count.
  if (!commands.includes('go')) await writeFile(path.join(dir, 'go'), 'not executable');
  return dir;
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-plan-'));
  machines.withGo = detectMachine(await fakePath('with-go', ['npm', 'go']));
  machines.withoutGo = detectMachine(await fakePath('without-go', ['npm']));
  machines.debian = detectMachine(await fakePath('debian', ['npm', 'apt-get', 'dpkg-deb']));
  machines.bare = detectMachine(await fakePath('bare', []));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

test('detectMachine finds executables on the fake PATH only', () => {
  expect(machines.withGo.go).toBe(path.join(root, 'with-go', 'go'));
  expect(machines.withGo.npm).toBe(path.join(root, 'with-go', 'npm'));
  expect(machines.withoutGo.go).toBeUndefined();
  expect(machines.withoutGo.aptGet).toBeUndefined();
  expect(machines.debian.aptGet).toBe(path.join(root, 'debian', 'apt-get'));
  expect(machines.bare).toEqual({
    npm: undefined,
    go: undefined,
    aptGet: undefined,
    dpkgDeb: undefined,
  });
});

describe.each(TOOLS.map((t) => [t.name, t] as const))('%s', (name, tool) => {
  const npm = tool.recipes.find((r) => r.kind === 'npm');
  const go = tool.recipes.find((r) => r.kind === 'go');
  const deb = tool.recipes.find((r) => r.kind === 'deb');

  test('with Go', () => {
    const plan = planTool(name, machines.withGo);
    expect(plan.version).toBe(tool.version);
    if (npm?.kind === 'npm') {
      expect(plan.recipe).toBe(npm);
      expect(plan.steps[0]).toEqual({
        kind: 'write',
        file: 'package.json',
        text: expect.stringContaining(`"${npm.package}": "${tool.version}"`),
      });
      expect(plan.steps[1]).toMatchObject({
        kind: 'run',
        command: machines.withGo.npm,
        args: expect.arrayContaining(['install', '--ignore-scripts']),
      });
      expect(plan.keepAs).toBe(`.tools/${name}@${tool.version}`);
      expect(plan.bins.map((b) => b.from)).toEqual(tool.bins.map((b) => `node_modules/.bin/${b}`));
    } else if (go?.kind === 'go') {
      expect(plan.recipe).toBe(go);
      expect(plan.steps[0]).toEqual({
        kind: 'run',
        command: machines.withGo.go,
        args: ['install', `${go.module}@v${tool.version}`],
        env: { GOBIN: `${STAGING}/bin` },
      });
      expect(plan.keepAs).toBeUndefined();
      expect(plan.bins.map((b) => b.from)).toEqual(tool.bins.map((b) => `bin/${b}`));
    } else {
      throw new Error(`${name} has neither an npm nor a Go recipe`);
    }
    if (tool.versionArgs)
      expect(plan.steps.at(-1)).toEqual({
        kind: 'check',
        file: plan.bins[0]!.from,
        args: tool.versionArgs,
      });
  });

  test('without Go', () => {
    if (npm) {
      expect(planTool(name, machines.withoutGo).recipe.kind).toBe('npm');
      return;
    }
    expect(() => planTool(name, machines.withoutGo)).toThrow(PlanError);
    expect(() => planTool(name, machines.withoutGo)).toThrow(
      /a Go toolchain, `go` \(for `go install .*@v.*`\).*not on PATH|none of them is on PATH/,
    );
    expect(() => planTool(name, machines.withoutGo)).toThrow(/go\.dev\/dl/);
  });

  test('without Go, on Debian', () => {
    if (npm?.kind === 'npm') {
      // npm is there too: the npm package is preferred over Debian's.
      const plan = planTool(name, machines.debian);
      expect(plan.recipe).toBe(npm);
      expect(plan.steps[1]).toMatchObject({ kind: 'run', command: machines.debian.npm });
      expect(plan.steps.some((s) => s.kind === 'extract-debs')).toBe(false);
    } else if (deb?.kind === 'deb') {
      const plan = planTool(name, machines.debian);
      expect(plan.recipe).toBe(deb);
      expect(plan.steps).toEqual([
        { kind: 'run', command: machines.debian.aptGet, args: ['download', deb.package] },
        { kind: 'extract-debs', into: 'root' },
      ]);
      expect(plan.notes.join()).toMatch(/Debian's version/);
    } else {
      expect(() => planTool(name, machines.debian)).toThrow(/Go toolchain/);
    }
  });
});

test('npm-only tools on a machine without npm name npm', () => {
  expect(() => planTool('buf', machines.bare)).toThrow(
    /npm \(to install the npm package @bufbuild\/buf@1\.\d+\.\d+\), or a Go toolchain/,
  );
  expect(() => planTool('protobuf', machines.bare)).toThrow(
    /npm \(to install the npm package protoc@/,
  );
});

test('--version overrides the pin; a Debian --version becomes pkg=version', () => {
  expect(planTool('buf', machines.withoutGo, { version: '1.50.0' }).steps[0]).toMatchObject({
    text: expect.stringContaining('"@bufbuild/buf": "1.50.0"'),
  });
  expect(planTool('mockgen', machines.withGo, { version: '0.5.0' }).steps[0]).toMatchObject({
    args: ['install', 'go.uber.org/mock/mockgen@v0.5.0'],
  });
  expect(planTool('mockgen', machines.debian, { version: '1.6.0-2+b6' }).steps[0]).toMatchObject({
    args: ['download', 'mockgen=1.6.0-2+b6'],
  });
});

test('protoc is another name for protobuf; unknown names suggest near ones', () => {
  expect(planTool('protoc', machines.withoutGo).tool).toBe('protobuf');
  expect(() => planTool('bufx', machines.withGo)).toThrow(
    /unknown tool "bufx" \(did you mean "buf"\?\)/,
  );
});

describe('bundles', () => {
  const std = BUNDLES.find((b) => b.name === 'rk-std')!;

  test('rk-std (and its alias std) with Go plans every tool', () => {
    expect(planInstall('rk-std', machines.withGo).map((p) => p.tool)).toEqual(std.tools);
    expect(planInstall('std', machines.withGo).map((p) => p.tool)).toEqual(std.tools);
  });

  test('rk-std without Go fails whole, naming each Go-only tool', () => {
    let message = '';
    try {
      planInstall('std', machines.withoutGo);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^cannot install the bundle rk-std here \(nothing was installed\)/);
    for (const t of [
      'protoc-gen-go',
      'protoc-gen-go-grpc',
      'protoc-gen-grpc-gateway',
      'protoc-gen-openapiv2',
      'protoc-gen-doc',
      'golangci-lint',
      'gocov',
      'swag',
    ]) {
      expect(message).toContain(`cannot install ${t} here`);
    }
    expect(message).not.toContain('cannot install buf');
    expect(message).not.toContain('cannot install protobuf');
  });

  test('the ts bundle needs only npm', () => {
    expect(planInstall('ts', machines.withoutGo).map((p) => p.recipe.kind)).toEqual([
      'npm',
      'npm',
      'npm',
      'npm',
      'npm',
    ]);
  });

  test('--version is refused for a bundle', () => {
    expect(() => planInstall('std', machines.withGo, { version: '1.0.0' })).toThrow(
      /--version applies to one tool/,
    );
  });
});

test('describePlan spells out the exact steps', () => {
  const lines = describePlan(planTool('golangci-lint', machines.withGo), '/p/.svc/bin');
  expect(lines).toEqual([
    '# golangci-lint 2.5.0 via go',
    `mkdir ${STAGING}   # a new folder inside /p/.svc/bin`,
    `(cd ${STAGING} && GOBIN=${STAGING}/bin ${machines.withGo.go} install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.5.0)`,
    `${STAGING}/bin/golangci-lint --version`,
    `mv ${STAGING}/bin/golangci-lint /p/.svc/bin/golangci-lint`,
    `rm -rf ${STAGING}`,
  ]);
});
