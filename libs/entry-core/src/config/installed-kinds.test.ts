import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  boot,
  ConfigError,
  entryBaseShape,
  findInstalledKinds,
  findInstalledMiddlewares,
  Phase,
  PluginRegistry,
  type Entry,
  type EntryPlugin,
} from '../index.js';
import { middlewareSchema } from '../call-layer.js';

let root: string;

function writePackage(dir: string, pkg: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
}

async function bootError(cwd: string, yaml: string): Promise<ConfigError> {
  try {
    await boot({ registry: new PluginRegistry(), configText: yaml, env: {}, argv: [], cwd });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected boot to fail');
}

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'svcboot-kinds-'));
  // An app in root/app, with packages installed in the app and one level up (a workspace root).
  writePackage(path.join(root, 'app'), { name: 'toy-app', version: '1.0.0' });
  writePackage(path.join(root, 'app/node_modules/@svcboot/entry-queue'), {
    name: '@svcboot/entry-queue',
    svcboot: { entryKey: 'queue' },
  });
  writePackage(path.join(root, 'node_modules/acme-entry-mail'), {
    name: 'acme-entry-mail',
    svcboot: { entryKey: 'mail' },
  });
  writePackage(path.join(root, 'node_modules/left-pad'), { name: 'left-pad' });
  writePackage(path.join(root, 'node_modules/@svcboot/broken'), {
    name: '@svcboot/broken',
    svcboot: { entryKey: 7 },
  });
  mkdirSync(path.join(root, 'node_modules/.bin'), { recursive: true });
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('installed entry kinds', () => {
  it('finds packages declaring svcboot.entryKey in node_modules at and above the app, in any scope', () => {
    const kinds = findInstalledKinds([path.join(root, 'app')]);
    expect(Object.fromEntries([...kinds].map(([k, v]) => [k, v.packageName]))).toEqual({
      queue: '@svcboot/entry-queue',
      mail: 'acme-entry-mail',
    });
  });

  it('prefers the copy nearest the app when two packages declare one key', () => {
    writePackage(path.join(root, 'node_modules/other-queue'), {
      name: 'other-queue',
      svcboot: { entryKey: 'queue' },
    });
    expect(findInstalledKinds([path.join(root, 'app')]).get('queue')?.packageName).toBe(
      '@svcboot/entry-queue',
    );
  });

  it('names the installed package to import for a key no plugin registers', async () => {
    const err = await bootError(path.join(root, 'app'), 'queue:\n  - name: jobs\n');
    expect(err.issues).toEqual([
      expect.objectContaining({
        path: 'queue',
        line: 1,
        message: expect.stringContaining("add `import '@svcboot/entry-queue';`"),
      }),
    ]);
  });

  it('suggests installed keys for a misspelt one, and says what to do for a key nothing provides', async () => {
    const misspelt = await bootError(path.join(root, 'app'), 'maill:\n  - name: x\n');
    expect(misspelt.issues[0]!.message).toContain('did you mean "mail"?');
    const unknown = await bootError(path.join(root, 'app'), 'zzz:\n  - name: x\n');
    expect(unknown.issues[0]!.message).toContain('(known: app, mail, queue)');
    expect(unknown.issues[0]!.message).toContain('needs that package installed and imported');
  });

  it('walks up from a folder that does not exist, and finds nothing where no node_modules holds the kind', () => {
    expect(findInstalledKinds([path.join(root, 'app', 'missing')]).get('queue')?.packageName).toBe(
      '@svcboot/entry-queue',
    );
    expect(findInstalledKinds([path.join(os.tmpdir(), 'svcboot-none', 'x')]).has('queue')).toBe(
      false,
    );
  });
});

/** A server kind with a `middleware:` section, as grpc and httpserver have (never created here). */
const toyServer: EntryPlugin = {
  key: 'toyserver',
  packageName: 'toy-server',
  entryType: 'ToyServer',
  phase: Phase.Server,
  schema: z.strictObject({ ...entryBaseShape, middleware: middlewareSchema }),
  create: () => ({}) as Entry,
};

async function bootMiddlewareError(cwd: string, middleware: string): Promise<ConfigError> {
  try {
    await boot({
      plugins: [toyServer],
      configText: `toyserver:\n  - name: s\n    middleware:\n${middleware}`,
      env: {},
      argv: [],
      cwd,
    });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected boot to fail');
}

describe('installed middleware packages', () => {
  beforeEach(() => {
    writePackage(path.join(root, 'node_modules/acme-middleware-stamp'), {
      name: 'acme-middleware-stamp',
      svcboot: { middlewareKeys: ['stamp', 'seal'] },
    });
  });

  it('finds packages declaring svcboot.middlewareKeys, every key of each', () => {
    const found = findInstalledMiddlewares([path.join(root, 'app')]);
    expect(Object.fromEntries([...found].map(([k, v]) => [k, v.packageName]))).toEqual({
      stamp: 'acme-middleware-stamp',
      seal: 'acme-middleware-stamp',
    });
    // Entry kinds and middlewares are apart: a middleware key is no entry kind.
    expect(findInstalledKinds([path.join(root, 'app')]).has('stamp')).toBe(false);
  });

  it('names the installed package to import when boot.yaml turns on a middleware nothing registered', async () => {
    const err = await bootMiddlewareError(
      path.join(root, 'app'),
      '      seal: { enabled: true }\n',
    );
    expect(err.issues).toEqual([
      expect.objectContaining({
        path: 'toyserver[s].middleware.seal',
        line: 4,
        message: expect.stringContaining(
          "provided by acme-middleware-stamp, which is installed but not registered: add `import 'acme-middleware-stamp';`",
        ),
      }),
    ]);
  });

  it("names svcboot's package to install for trace and jwt when none is installed", async () => {
    const err = await bootMiddlewareError(
      path.join(root, 'app'),
      '      trace: { enabled: true }\n      jwt: { enabled: true }\n',
    );
    const byPath = Object.fromEntries(err.issues.map((i) => [i.path, i.message]));
    expect(byPath['toyserver[s].middleware.trace']).toContain(
      'provided by @svcboot/middleware-trace, which is not installed: run `npm install @svcboot/middleware-trace`',
    );
    expect(byPath['toyserver[s].middleware.jwt']).toContain(
      'provided by @svcboot/middleware-jwt, which is not installed: run `npm install @svcboot/middleware-jwt`',
    );
  });

  it('keeps the did-you-mean message for a key no package provides', async () => {
    const err = await bootMiddlewareError(path.join(root, 'app'), '      timout: {}\n');
    expect(err.issues[0]!.message).toContain('unknown key "timout"; did you mean "timeout"?');
  });
});
