import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boot, defaultRegistry } from '@svcboot/entry-core';
import * as gateway from '@svcboot/grpc-gateway';
import * as server from '@svcboot/grpc-server';
import * as typed from '@svcboot/grpc-typed';
import { expect, it } from 'vitest';
import * as entryGrpc from './index.js';

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Manifest {
  name: string;
  svcboot?: { entryKey?: string; getter?: string };
  dependencies?: Record<string, string>;
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

it("exports every name of the server core and the gateway's path templates, the very same values (and through the core grpc-typed's)", () => {
  const all = new Map(Object.entries(entryGrpc));
  expect([...all.keys()].sort()).toEqual([...Object.keys(server), 'compileTemplate'].sort());
  for (const [name, value] of Object.entries(server)) expect(all.get(name), name).toBe(value);
  expect(all.get('compileTemplate')).toBe(new Map(Object.entries(gateway)).get('compileTemplate'));
  const fromTyped = new Map(Object.entries(typed));
  for (const name of ['RpcError', 'Code', 'typedClient', 'ErrorInfoSchema', 'grpcCallPayloads'])
    expect(all.get(name), name).toBe(fromTyped.get(name));
});

it('is the one package that declares the grpc key: the core registers the kind under its name', () => {
  expect(manifest(libDir).svcboot).toEqual({ entryKey: 'grpc', getter: 'grpcEntry' });
  expect(manifest(libDir).dependencies).toHaveProperty('@svcboot/grpc-server');
  // The core declares no key (the CLI and boot's "not installed" errors name one package per key:
  // this one, which installs everything), and its plugin names this package.
  const require = createRequire(import.meta.url);
  const serverDir = path.dirname(require.resolve('@svcboot/grpc-server/package.json'));
  expect(manifest(serverDir).svcboot).toBeUndefined();
  expect(entryGrpc.grpcPlugin.packageName).toBe('@svcboot/entry-grpc');
  expect(defaultRegistry.get('grpc')).toBe(server.grpcPlugin);
});

it('boots a grpc entry from a boot.yaml when imported', async () => {
  const app = await boot({
    configText: 'app: { name: exports }\ngrpc: [{ name: api, port: 0 }]\n',
  });
  try {
    await app.bootstrap();
    const res = await fetch(`http://127.0.0.1:${entryGrpc.grpcEntry(app, 'api').port}/livez`);
    expect(res.status).toBe(200);
  } finally {
    await app.shutdown('test');
  }
});
