import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boot, errorTable, SvcError } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { grpcErrors } from './errors.js';
// Registers the grpc kind with the default registry (the tests boot without a plugin list).
import './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// The user's reference is entry-grpc's README (the package users install; grpc-server's points to it).
it('README lists every error code of the catalogue, as errorTable writes it', () => {
  const readme = readFileSync(path.join(here, '..', '..', 'entry-grpc', 'README.md'), 'utf8');
  expect(readme).toContain(errorTable(grpcErrors));
});

/** The entry's own error behind the BootstrapError of `app.bootstrap()`. */
async function bootstrapCause(entry: string): Promise<SvcError> {
  const app = await boot({
    configText: `logger:\n  - name: q\n    level: silent\ngrpc:\n  - name: e\n    port: 0\n    loggerEntry: q\n${entry}`,
    argv: [],
  });
  const err = await app.bootstrap().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SvcError);
  const cause = (err as Error).cause;
  expect(cause).toBeInstanceOf(SvcError);
  return cause as SvcError;
}

describe('entry-grpc errors carry their code', () => {
  it('SVC_GRPC_TLS_INCOMPLETE: certFile without keyFile', async () => {
    const cause = await bootstrapCause('    tls:\n      certFile: cert.pem\n');
    expect(cause.code).toBe('SVC_GRPC_TLS_INCOMPLETE');
    expect(cause.message).toBe('grpc[e].tls: set both certFile and keyFile');
  });

  it('SVC_GRPC_DESCRIPTOR_SETS: a descriptor set that does not exist, the read error kept', async () => {
    const cause = await bootstrapCause('    protos:\n      descriptorSets: [no-such.binpb]\n');
    expect(cause.code).toBe('SVC_GRPC_DESCRIPTOR_SETS');
    expect(cause.message).toMatch(
      /^grpc\[e\]\.protos\.descriptorSets: no-such\.binpb: cannot read/,
    );
    expect(cause.cause).toBeInstanceOf(Error);
  });

  it('SVC_GRPC_MAPPING_FILE: a gwMappingFiles yaml of another type', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'grpc-errors-'));
    try {
      const file = path.join(dir, 'rules.yaml');
      await writeFile(file, 'type: google.api.Other\n');
      const cause = await bootstrapCause(`    gwMappingFiles: [${JSON.stringify(file)}]\n`);
      expect(cause.code).toBe('SVC_GRPC_MAPPING_FILE');
      expect(cause.message).toBe(
        `grpc[e].gwMappingFiles: ${file}: type is google.api.Other, expected google.api.Service`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
