import { boot } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocuments } from '@svcboot/openapi';
import { grpcEntry, grpcPlugin } from '@svcboot/grpc-server';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from '../../../grpc-server/src/test-support/library-service.js';

// buildOpenApiDocuments against the oracle: an entry booted with the same settings and the
// proto's service added, serving both documents at /sw/.

async function servedBy(grpcSection: string): Promise<{ v2: unknown; v3: unknown }> {
  const app = await boot({
    configText: `app: { name: library, version: 1.2.3, description: a test library }\nlogger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    generateUnboundMethods: true\n    protos:\n      files: ["${libraryProto}"]\n      includeDirs: ["${protoDir}"]\n${grpcSection}`,
    argv: [],
    env: {},
    plugins: [grpcPlugin],
  });
  grpcEntry(app, 'g').addService(libraryDefinition(), libraryImplementation);
  await app.bootstrap();
  try {
    const base = `http://127.0.0.1:${grpcEntry(app, 'g').port}/sw`;
    const get = async (file: string): Promise<unknown> => {
      const res = await fetch(`${base}/${file}`);
      expect(res.status).toBe(200);
      return res.json();
    };
    return { v2: await get('swagger.json'), v3: await get('openapi.json') };
  } finally {
    await app.shutdown();
  }
}

const protos = { files: [libraryProto], includeDirs: [protoDir] };

describe('buildOpenApiDocuments', () => {
  it('builds, with no server, the documents an entry with the same settings serves (defaults)', async () => {
    const built = await buildOpenApiDocuments({
      protos,
      generateUnboundMethods: true,
      appName: 'library',
      appVersion: '1.2.3',
      appDescription: 'a test library',
    });
    const served = await servedBy('    sw: { enabled: true }\n');
    expect(built.v3Error).toBeUndefined();
    expect(built.v2).toEqual(served.v2);
    expect(built.v3).toEqual(served.v3);
  });

  it('applies the sw options and gwOption.allowPatchFeature as the entry does', async () => {
    const sw = {
      simpleOperationIds: true,
      openapiNamingStrategy: 'fqn',
      enumsAsInts: true,
      disableDefaultErrors: true,
    };
    const built = await buildOpenApiDocuments({
      protos,
      generateUnboundMethods: true,
      gwOption: { allowPatchFeature: false },
      sw,
      appName: 'library',
      appVersion: '1.2.3',
      appDescription: 'a test library',
    });
    const plain = await buildOpenApiDocuments({
      protos,
      generateUnboundMethods: true,
      appName: 'library',
      appVersion: '1.2.3',
      appDescription: 'a test library',
    });
    expect(built.v2).not.toEqual(plain.v2);
    const served = await servedBy(
      '    gwOption: { allowPatchFeature: false }\n    sw: { enabled: true, simpleOperationIds: true, openapiNamingStrategy: fqn, enumsAsInts: true, disableDefaultErrors: true }\n',
    );
    expect(built.v2).toEqual(served.v2);
    expect(built.v3).toEqual(served.v3);
  });

  it('rejects sw options the entry would reject, naming the setting', async () => {
    await expect(
      buildOpenApiDocuments({
        protos,
        sw: { openapiNamingStrategy: 'camel' },
        appName: 'x',
        configPath: 'grpc[api]',
      }),
    ).rejects.toThrow(/grpc\[api\]\.sw\.openapiNamingStrategy: /);
  });

  it('names the protos setting when a file cannot be loaded', async () => {
    await expect(
      buildOpenApiDocuments({ protos: { files: ['no/such.proto'] }, appName: 'x' }),
    ).rejects.toThrow(/^grpc\.protos: .*no\/such\.proto/);
  });
});
