import { createRequire } from 'node:module';
import * as index from '@grpc/grpc-js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '@svcboot/testkit';
import {
  METADATA_MODULE,
  STATUS_MODULE,
  grpcJs,
  metadataClass,
  partsOf,
  status,
} from './grpc-js.js';

const require = createRequire(import.meta.url);

describe('grpc-js in two parts', () => {
  it("gives the index's own Metadata class and status codes, from their own modules", () => {
    expect(metadataClass()).toBe(index.Metadata);
    expect(metadataClass()).toBe(metadataClass());
    expect(status).toBe(index.status);
    expect(status.RESOURCE_EXHAUSTED).toBe(8);
    expect(new index.Metadata() instanceof metadataClass()).toBe(true);
    // Where they are today: an upgrade that moves them makes the start load the whole index again.
    const loaded: string[] = [];
    partsOf((id) => {
      loaded.push(id);
      return require(id);
    });
    expect(loaded).toEqual([METADATA_MODULE, STATUS_MODULE]);
  });

  it('falls back to the index when an upgrade moved those modules', () => {
    const loaded: string[] = [];
    const parts = partsOf((id) => {
      loaded.push(id);
      if (id !== '@grpc/grpc-js')
        throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
      return require(id);
    });
    expect(parts.Metadata).toBe(index.Metadata);
    expect(parts.status).toBe(index.status);
    expect(loaded.at(-1)).toBe('@grpc/grpc-js');
    // A module that is there but no longer holds them: the index too.
    const other = partsOf((id) => (id === '@grpc/grpc-js' ? require(id) : {}));
    expect(other.Metadata).toBe(index.Metadata);
  });

  it('loads Metadata’s module on the first use, not with the status codes', async () => {
    // A fresh process: this one has loaded grpc-js already.
    const here = path.dirname(fileURLToPath(import.meta.url));
    const script = [
      "const m = await import('./src/grpc-js.ts');",
      "const { createRequire } = await import('node:module');",
      'const cache = () => Object.keys(createRequire(import.meta.url).cache);',
      "const has = (f) => cache().some((p) => p.endsWith(f.replace('@grpc/grpc-js/', '')));",
      `console.log(m.status.OK, has(${JSON.stringify(STATUS_MODULE)}), has(${JSON.stringify(METADATA_MODULE)}));`,
      'new (m.metadataClass())();',
      `console.log(has(${JSON.stringify(METADATA_MODULE)}));`,
    ].join('\n');
    const { stdout } = await run(
      process.execPath,
      ['--conditions=svcboot-source', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: path.resolve(here, '..') },
    );
    expect(stdout.trim().split('\n')).toEqual(['0 true false', 'true']);
  });

  it('loads the whole package on demand, once', () => {
    expect(grpcJs().Client).toBe(index.Client);
    expect(grpcJs()).toBe(grpcJs());
  });
});
