import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SvcError } from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocuments } from './index.js';

// The documents of a small API from a .proto file and a gwMappingFiles rule, with no server and
// no gRPC library: what `svc pb openapi` does for a project. Expected names follow
// protoc-gen-openapiv2's conventions (operation ids `<Service>_<Method>`, legacy definition names
// `<last package part><Message>`, a body parameter named `body`).

let dir: string;

/** The error a build fails with (a build that succeeds fails the test). */
async function failure(build: Promise<unknown>): Promise<SvcError> {
  try {
    await build;
  } catch (err) {
    return err as SvcError;
  }
  throw new Error('expected the build to fail');
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-openapi-'));
  await writeFile(
    path.join(dir, 'shop.proto'),
    [
      'syntax = "proto3";',
      'package shop.v1;',
      'service Shop {',
      '  rpc GetItem(GetItemRequest) returns (Item);',
      '  rpc AddItem(Item) returns (Item);',
      '  rpc Upload(stream Item) returns (Item);',
      '}',
      'message GetItemRequest { string id = 1; }',
      'message Item { string id = 1; string title = 2; }',
      '',
    ].join('\n'),
  );
  await writeFile(
    path.join(dir, 'shop.yaml'),
    [
      'type: google.api.Service',
      'config_version: 3',
      'http:',
      '  rules:',
      '    - selector: shop.v1.Shop.GetItem',
      '      get: /v1/items/{id}',
      '    - selector: shop.v1.Nowhere.Call',
      '      get: /v1/nowhere',
      '',
    ].join('\n'),
  );
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('buildOpenApiDocuments', () => {
  it('documents the mapping-file rules and, with generateUnboundMethods, the unbound unary methods', async () => {
    const warnings: string[] = [];
    const { v2, v3, v3Error } = await buildOpenApiDocuments({
      protos: { files: ['shop.proto'] },
      gwMappingFiles: ['shop.yaml'],
      generateUnboundMethods: true,
      appName: 'shop',
      appVersion: '2.0.0',
      baseDir: dir,
      warn: (m) => warnings.push(m),
    });
    expect(v3Error).toBeUndefined();
    expect(v2['swagger']).toBe('2.0');
    expect(v2['info']).toEqual(expect.objectContaining({ title: 'shop', version: '2.0.0' }));
    const paths = v2['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    // The rule, the unbound AddItem; the client-streaming Upload is not bound (as the gateway).
    expect(Object.keys(paths).sort()).toEqual(['/shop.v1.Shop/AddItem', '/v1/items/{id}']);
    const get = paths['/v1/items/{id}']!['get']!;
    expect(get['operationId']).toBe('Shop_GetItem');
    expect(get['parameters']).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true, type: 'string' }),
    ]);
    const post = paths['/shop.v1.Shop/AddItem']!['post']!;
    expect(post['parameters']).toEqual([
      expect.objectContaining({
        name: 'body',
        in: 'body',
        schema: { $ref: '#/definitions/v1Item' },
      }),
    ]);
    expect(Object.keys(v2['definitions'] as object)).toContain('v1Item');
    expect(v3?.['openapi']).toBe('3.1.0');
    // The rule naming no service of the protos is skipped, with a warning naming it.
    expect(warnings).toEqual([expect.stringContaining('shop.v1.Nowhere.Call')]);
  });

  it('documents a streaming method bound with no body (grpc-gateway FlowCombination StreamEmptyRpc)', async () => {
    await writeFile(
      path.join(dir, 'upload-nobody.yaml'),
      'type: google.api.Service\nconfig_version: 3\nhttp:\n  rules:\n    - selector: shop.v1.Shop.Upload\n      post: /v1/upload\n',
    );
    const { v2 } = await buildOpenApiDocuments({
      protos: { files: ['shop.proto'] },
      gwMappingFiles: ['upload-nobody.yaml'],
      appName: 'shop',
      baseDir: dir,
      configPath: 'grpc[shop]',
    });
    const paths = v2['paths'] as Record<string, Record<string, { description?: string }>>;
    expect(paths['/v1/upload']?.['post']).toBeDefined();
  });

  it('refuses a streaming method whose rule names a body field, naming the rule', async () => {
    await writeFile(
      path.join(dir, 'upload.yaml'),
      'type: google.api.Service\nconfig_version: 3\nhttp:\n  rules:\n    - selector: shop.v1.Shop.Upload\n      post: /v1/upload\n      body: title\n',
    );
    const err = await failure(
      buildOpenApiDocuments({
        protos: { files: ['shop.proto'] },
        gwMappingFiles: ['upload.yaml'],
        appName: 'shop',
        baseDir: dir,
        configPath: 'grpc[shop]',
      }),
    );
    expect(err.code).toBe('SVC_OPENAPI_FAILED');
    expect(err.message).toMatch(
      /^grpc\[shop\]\.sw: .*POST \/v1\/upload of \/shop\.v1\.Shop\/Upload: .*needs body "\*" or no body/,
    );
  });

  it('names the setting for bad settings, a missing proto file and an unreadable mapping file', async () => {
    const invalid = await failure(
      buildOpenApiDocuments({
        appName: 'a',
        sw: { openapiNamingStrategy: 'camel' },
        configPath: 'grpc[api]',
      }),
    );
    expect(invalid.code).toBe('SVC_OPENAPI_SETTINGS_INVALID');
    expect(invalid.message).toMatch(
      /^invalid OpenAPI settings: grpc\[api\]\.sw\.openapiNamingStrategy: /,
    );
    const missing = await failure(
      buildOpenApiDocuments({
        appName: 'a',
        protos: { files: ['no-such.proto'] },
        baseDir: dir,
      }),
    );
    expect(missing.code).toBe('SVC_OPENAPI_PROTOS');
    expect(missing.message).toMatch(/^grpc\.protos: .*no-such\.proto/);
    const mapping = await failure(
      buildOpenApiDocuments({
        appName: 'a',
        protos: { files: ['shop.proto'] },
        gwMappingFiles: ['absent.yaml'],
        baseDir: dir,
      }),
    );
    expect(mapping.code).toBe('SVC_OPENAPI_MAPPING_FILE');
    expect(mapping.message).toMatch(/^grpc\.gwMappingFiles: .*absent\.yaml/);
  });
});
