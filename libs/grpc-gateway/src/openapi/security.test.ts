import { boot } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
// Registers middleware.jwt (as a service importing the package does).
import '@svcboot/middleware-jwt';
import { buildOpenApiDocuments } from '@svcboot/openapi';
import { grpcEntry, grpcPlugin } from '@svcboot/grpc-server';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from '../../../grpc-server/src/test-support/library-service.js';

// With middleware.jwt or middleware.auth on, the documents carry their security schemes (Swagger
// UI's Authorize button) and each guarded operation its `security`; a guard's ignore list (a
// gRPC method, a path prefix, a glob) leaves the operations it names without it. The entry
// serves what buildOpenApiDocuments builds.

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const protos = { files: [libraryProto], includeDirs: [protoDir] };

const middleware = {
  jwt: {
    enabled: true,
    symmetric: { token: SECRET },
    ignore: ['/sw/', '/test.v1.Library/Fail', '/v1/legacy/'],
  },
  auth: {
    enabled: true,
    basic: ['reader:pass'],
    apiKey: ['k1'],
    ignore: ['/sw/', '/v1/shelves/**'],
  },
};

type Doc = {
  paths: Record<string, Record<string, { security?: unknown }>>;
  securityDefinitions?: unknown;
  components?: { securitySchemes?: unknown };
};

async function served(): Promise<{ v2: Doc; v3: Doc }> {
  const app = await boot({
    configText: [
      'app: { name: library, version: 1.2.3, description: a test library }',
      'logger:',
      '  - name: q',
      '    level: warn',
      'grpc:',
      '  - name: g',
      '    port: 0',
      '    loggerEntry: q',
      '    sw: { enabled: true }',
      `    protos: { files: ["${libraryProto}"], includeDirs: ["${protoDir}"] }`,
      `    middleware: ${JSON.stringify(middleware)}`,
      '',
    ].join('\n'),
    argv: [],
    env: {},
    plugins: [grpcPlugin],
  });
  grpcEntry(app, 'g').addService(libraryDefinition(), libraryImplementation);
  await app.bootstrap();
  try {
    const get = async (file: string): Promise<Doc> => {
      const res = await fetch(`http://127.0.0.1:${grpcEntry(app, 'g').port}/sw/${file}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Doc;
    };
    return { v2: await get('swagger.json'), v3: await get('openapi.json') };
  } finally {
    await app.shutdown();
  }
}

const both = [
  { bearerAuth: [], basicAuth: [] },
  { bearerAuth: [], apiKeyAuth: [] },
];

describe('OpenAPI security from middleware.jwt and middleware.auth', () => {
  it('documents the schemes and which operations need them, as the entry serves', async () => {
    const built = await buildOpenApiDocuments({
      protos,
      middleware,
      appName: 'library',
      appVersion: '1.2.3',
      appDescription: 'a test library',
    });
    const v2 = built.v2 as Doc;
    const v3 = built.v3 as Doc;
    expect(v2.securityDefinitions).toEqual({
      bearerAuth: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'A JWT, sent as "Bearer <token>"',
      },
      basicAuth: { type: 'basic' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    expect(v3.components?.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      basicAuth: { type: 'http', scheme: 'basic' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    for (const doc of [v2, v3]) {
      // Both guards: a JWT and one of the auth credentials.
      expect(doc.paths['/v1/books/{id}:archive']?.['post']?.security).toEqual(both);
      // auth ignores /v1/shelves/**: the JWT alone.
      expect(doc.paths['/v1/shelves/{shelf}/books']?.['post']?.security).toEqual([
        { bearerAuth: [] },
      ]);
      // jwt ignores the Fail method by its gRPC name: auth alone.
      expect(doc.paths['/v1/fail/{code}']?.['delete']?.security).toEqual([
        { basicAuth: [] },
        { apiKeyAuth: [] },
      ]);
    }
    // jwt ignores the /v1/legacy/ prefix (v2 has that binding; auth still applies).
    expect(v2.paths['/v1/legacy/shelves/{name}']?.['get']?.security).toEqual([
      { basicAuth: [] },
      { apiKeyAuth: [] },
    ]);

    const fromEntry = await served();
    expect(fromEntry.v2).toEqual(v2);
    expect(fromEntry.v3).toEqual(v3);
  });

  it('ignoring every guard of an operation leaves it without security; no guard, no schemes', async () => {
    const open = await buildOpenApiDocuments({
      protos,
      middleware: { jwt: { ...middleware.jwt, ignore: ['/v1/**'] } },
      appName: 'library',
    });
    const v2 = open.v2 as Doc;
    expect(v2.securityDefinitions).toEqual({ bearerAuth: expect.any(Object) });
    for (const item of Object.values(v2.paths))
      for (const op of Object.values(item)) expect(op.security).toBeUndefined();
    const none = await buildOpenApiDocuments({ protos, appName: 'library' });
    expect((none.v2 as Doc).securityDefinitions).toBeUndefined();
    expect((none.v3 as Doc).components?.securitySchemes).toBeUndefined();
  });

  it('a token from a query parameter or a cookie is an apiKey scheme of that name (no cookie in 2.0)', async () => {
    const built = await buildOpenApiDocuments({
      protos,
      middleware: { jwt: { ...middleware.jwt, tokenLookup: 'query:token,cookie:jwt', ignore: [] } },
      appName: 'library',
    });
    expect((built.v2 as Doc).securityDefinitions).toEqual({
      jwt_query_token: { type: 'apiKey', in: 'query', name: 'token', description: 'A JWT' },
    });
    expect((built.v3 as Doc).components?.securitySchemes).toEqual({
      jwt_query_token: { type: 'apiKey', in: 'query', name: 'token', description: 'A JWT' },
      jwt_cookie_jwt: { type: 'apiKey', in: 'cookie', name: 'jwt', description: 'A JWT' },
    });
    expect((built.v2 as Doc).paths['/v1/fail/{code}']?.['delete']?.security).toEqual([
      { jwt_query_token: [] },
    ]);
    expect((built.v3 as Doc).paths['/v1/fail/{code}']?.['delete']?.security).toEqual([
      { jwt_query_token: [] },
      { jwt_cookie_jwt: [] },
    ]);
  });
});
