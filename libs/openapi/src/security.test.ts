import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocuments } from './index.js';

// The security schemes of an entry's guards (middleware.jwt, middleware.auth) in documents built
// without a server: what `svc pb openapi` writes. Only the guards' on/off, ignore lists, token
// sources and whether credentials are listed are read: the secrets may be missing or unresolved.
// (entry-grpc's src/openapi/security.test.ts checks that a booted entry serves the same.)

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-openapi-security-'));
  await writeFile(
    path.join(dir, 'shop.proto'),
    [
      'syntax = "proto3";',
      'package shop.v1;',
      'service Shop {',
      '  rpc GetItem(GetItemRequest) returns (Item);',
      '  rpc AddItem(Item) returns (Item);',
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
      '    - selector: shop.v1.Shop.AddItem',
      '      post: /v1/items',
      '      body: "*"',
      '',
    ].join('\n'),
  );
});

afterAll(() => rm(dir, { recursive: true, force: true }));

type Doc = Record<string, unknown> & {
  paths: Record<string, Record<string, { security?: unknown }>>;
};

async function documents(middleware: Record<string, unknown> | undefined) {
  const { v2, v3 } = await buildOpenApiDocuments({
    protos: { files: ['shop.proto'] },
    gwMappingFiles: ['shop.yaml'],
    appName: 'shop',
    baseDir: dir,
    ...(middleware ? { middleware } : {}),
  });
  return { v2: v2 as Doc, v3: v3 as Doc };
}

describe('buildOpenApiDocuments: security of middleware.jwt and middleware.auth', () => {
  it('a bearer JWT and API keys, each guarded operation needing both unless a guard ignores it; secrets never read', async () => {
    const { v2, v3 } = await documents({
      jwt: {
        enabled: true,
        ignore: ['/shop.v1.Shop/AddItem'],
        symmetric: { token: '${JWT_SECRET}' },
      },
      auth: { enabled: true, apiKey: ['${API_KEY}'] },
    });
    expect(v2['securityDefinitions']).toEqual({
      bearerAuth: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'A JWT, sent as "Bearer <token>"',
      },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    expect(v2.paths['/v1/items/{id}']?.['get']?.security).toEqual([
      { bearerAuth: [], apiKeyAuth: [] },
    ]);
    expect(v2.paths['/v1/items']?.['post']?.security).toEqual([{ apiKeyAuth: [] }]);
    expect((v3['components'] as { securitySchemes: unknown }).securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    expect(v3.paths['/v1/items']?.['post']?.security).toEqual([{ apiKeyAuth: [] }]);
    expect(JSON.stringify([v2, v3])).not.toContain('JWT_SECRET');
    expect(JSON.stringify([v2, v3])).not.toContain('API_KEY');
  });

  it('a token in a query parameter or a cookie: alternatives, the cookie only in 3.1', async () => {
    const { v2, v3 } = await documents({
      jwt: { enabled: true, tokenLookup: 'query:token,cookie:jwt' },
    });
    expect(Object.keys(v2['securityDefinitions'] as object)).toEqual(['jwt_query_token']);
    expect(v2.paths['/v1/items/{id}']?.['get']?.security).toEqual([{ jwt_query_token: [] }]);
    expect(v3.paths['/v1/items/{id}']?.['get']?.security).toEqual([
      { jwt_query_token: [] },
      { jwt_cookie_jwt: [] },
    ]);
    expect(
      (v3['components'] as { securitySchemes: Record<string, unknown> }).securitySchemes[
        'jwt_cookie_jwt'
      ],
    ).toEqual({ type: 'apiKey', in: 'cookie', name: 'jwt', description: 'A JWT' });
  });

  it('no guard on (or none given): no schemes, no security', async () => {
    for (const middleware of [undefined, { jwt: { enabled: false }, auth: { basic: ['a:b'] } }]) {
      const { v2, v3 } = await documents(middleware);
      expect(v2['securityDefinitions']).toBeUndefined();
      expect(v2.paths['/v1/items/{id}']?.['get']?.security).toBeUndefined();
      expect((v3['components'] as Record<string, unknown>)['securitySchemes']).toBeUndefined();
    }
  });
});
