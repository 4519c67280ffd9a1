import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import {
  credentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { boot } from '@svcboot/entry-core';
import { isListening, waitFor, writeSelfSignedCert } from '@svcboot/testkit';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { grpcEntry } from './index.js';
import { libraryClient, startLibrary, unary } from './test-support/harness.js';
import { libraryProto, protoDir } from './test-support/library-service.js';
import { pinnedFiles, UI_PACKAGES } from '../../../tools/scripts/ui-packages.mjs';

describe('grpc entry hooks', () => {
  it('runs user interceptors on gRPC calls and user Koa middleware before its own routes', async () => {
    const seen: string[] = [];
    const interceptor: ServerInterceptor = (desc, call) =>
      new ServerInterceptingCall(call, {
        start: (next) => {
          seen.push(desc.path);
          next();
        },
      });
    const h = await startLibrary('', {
      setup: (entry) => {
        entry.addInterceptor(interceptor);
        entry.koa.use(async (ctx, next) => {
          if (ctx.path === '/custom') {
            ctx.body = 'mine';
            return;
          }
          await next();
          ctx.set('X-Wrapped', 'yes');
        });
      },
    });
    try {
      await unary(h.client, 'Ping', { text: 'x' });
      expect(seen).toEqual(['/test.v1.Library/Ping']);
      expect(await (await fetch(`${h.base}/custom`)).text()).toBe('mine');
      expect((await fetch(`${h.base}/livez`)).headers.get('x-wrapped')).toBe('yes');
      expect(() => h.entry.addService({} as ServiceDefinition, {})).toThrow(/before bootstrap/);
    } finally {
      await h.stop();
    }
  });

  it('serves a generated-style service definition (no proto-loader descriptors) through gRPC and the gateway', async () => {
    const root = new protobuf.Root();
    root.loadSync(libraryProto, { keepCase: false });
    const Ping = root.lookupType('test.v1.PingRequest');
    const Pong = root.lookupType('test.v1.PingResponse');
    // What grpc_tools_node_protoc / ts-proto emit: serializers, no fileDescriptorProtos.
    const definition: ServiceDefinition = {
      ping: {
        path: '/test.v1.Library/Ping',
        requestStream: false,
        responseStream: false,
        requestSerialize: (m: object) => Buffer.from(Ping.encode(Ping.fromObject(m)).finish()),
        requestDeserialize: (b: Buffer) => Ping.toObject(Ping.decode(b)),
        responseSerialize: (m: object) => Buffer.from(Pong.encode(Pong.fromObject(m)).finish()),
        responseDeserialize: (b: Buffer) => Pong.toObject(Pong.decode(b)),
        originalName: 'ping',
      },
    };
    const app = await boot({
      configText: `logger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    generateUnboundMethods: true\n    protos:\n      files: ["${libraryProto}"]\n      includeDirs: ["${protoDir}"]\n`,
      argv: [],
    });
    grpcEntry(app, 'g').addService(definition, {
      ping: (call: { request: { text: string } }, cb: (e: null, v: object) => void) =>
        cb(null, { text: `gen ${call.request.text}` }),
    });
    await app.bootstrap();
    try {
      const port = grpcEntry(app, 'g').port;
      const res = await fetch(`http://127.0.0.1:${port}/test.v1.Library/Ping`, {
        method: 'POST',
        body: '{"text":"a"}',
      });
      expect(await res.json()).toEqual({ text: 'gen a' });
      const client = libraryClient(`127.0.0.1:${port}`);
      const r = await unary(client, 'Ping', { text: 'b' });
      client.close();
      expect(r.response).toEqual({ text: 'gen b' });
    } finally {
      await app.shutdown();
    }
  });

  it('lets in-flight calls finish at shutdown, then stops accepting', async () => {
    let release: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finish: (() => void) | undefined;
    const h = await startLibrary('', {
      overrides: {
        Ping: (_call: unknown, cb: (e: null, v: object) => void) => {
          finish = () => cb(null, { text: 'late' });
          release();
        },
      },
    });
    const inflight = unary(h.client, 'Ping', { text: 'x' });
    await started;
    const stopping = h.stop();
    await waitFor('the listener to close', async () => !(await isListening(h.port)));
    finish!();
    const r = await inflight;
    expect(r.error).toBeUndefined();
    expect(r.response).toEqual({ text: 'late' });
    await stopping;
  });

  it('fails bootstrap with the port and what to do when the port is taken', async () => {
    const h = await startLibrary();
    try {
      const app = await boot({
        configText: `logger:\n  - name: q\n    level: silent\ngrpc:\n  - name: clash\n    port: ${h.port}\n    loggerEntry: q\n`,
        argv: [],
      });
      await expect(app.bootstrap()).rejects.toThrow(
        new RegExp(`cannot listen on port ${h.port}.*port: 0`),
      );
    } finally {
      await h.stop();
    }
  });
});

describe('TLS', () => {
  it('serves gRPC (ALPN h2) and HTTPS (http/1.1) on one TLS port', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'grpc-tls-'));
    try {
      const { key, cert } = writeSelfSignedCert(dir);
      const h = await startLibrary(
        `    tls:\n      certFile: "${cert}"\n      keyFile: "${key}"\n`,
      );
      try {
        const ca = await readFile(cert);
        const client = libraryClient(`localhost:${h.port}`, credentials.createSsl(ca));
        const r = await unary(client, 'Ping', { text: 't' });
        client.close();
        expect(r.response).toEqual({ text: 'pong t' });
        const body = await new Promise<string>((resolve, reject) => {
          https
            .request(
              {
                host: 'localhost',
                port: h.port,
                path: '/test.v1.Library/Ping',
                method: 'POST',
                ca,
              },
              (res) => {
                let s = '';
                res.on('data', (c: Buffer) => (s += c.toString()));
                res.on('end', () => resolve(s));
              },
            )
            .on('error', reject)
            .end('{"text":"s"}');
        });
        expect(JSON.parse(body)).toEqual({ text: 'pong s' });
      } finally {
        await h.stop();
      }
      // The same through a cert entry.
      const viaEntry = await boot({
        configText: `logger:\n  - name: q\n    level: warn\ncert:\n  - name: tls\n    certPemPath: "${cert}"\n    keyPemPath: "${key}"\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n    tls: { certEntry: tls }\n`,
        argv: [],
      });
      await viaEntry.bootstrap();
      try {
        const port = grpcEntry(viaEntry, 'g').port;
        const status = await new Promise<number | undefined>((resolve, reject) => {
          https
            .get({ host: 'localhost', port, path: '/livez', ca: readFileSync(cert) }, (res) =>
              resolve(res.statusCode),
            )
            .on('error', reject);
        });
        expect(status).toBe(200);
      } finally {
        await viaEntry.shutdown();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('UIs and the OpenAPI document', () => {
  it('serves only the files a UI names (no path traversal) and the document with the routes', async () => {
    const h = await startLibrary();
    try {
      const get = (p: string) => fetch(`${h.base}${p}`);
      expect((await get('/sw/')).headers.get('content-type')).toContain('text/html');
      // The UI files are the pinned tarballs' own (written into assets/ at build time), byte for byte.
      const pinned = new Map<string, Map<string, Buffer>>();
      for (const ui of UI_PACKAGES) pinned.set(ui.pkg, await pinnedFiles(ui));
      for (const [p, pkg, file] of [
        ['/sw/swagger-ui-bundle.js', 'swagger-ui-dist', 'swagger-ui-bundle.js'],
        ['/sw/swagger-ui.css', 'swagger-ui-dist', 'swagger-ui.css'],
        ['/docs/rapidoc-min.js', 'rapidoc', 'dist/rapidoc-min.js'],
      ] as const) {
        const res = await get(p);
        expect(res.status, p).toBe(200);
        const want = pinned.get(pkg)?.get(file);
        expect(want, `${pkg} ${file}`).toBeDefined();
        expect(Buffer.from(await res.arrayBuffer()).equals(want!), p).toBe(true);
      }
      expect((await get('/docs/LICENSE')).status).toBe(404); // shipped beside the file, not served
      expect((await get('/sw')).status).toBe(200); // redirected to /sw/
      for (const bad of [
        '/sw/../package.json',
        '/sw/%2e%2e/%2e%2e/package.json',
        '/sw/..%2fpackage.json',
        '/docs/../../etc/passwd',
        '/sw/package.json',
      ]) {
        const res = await get(bad);
        expect(res.status, bad).toBe(404);
        expect(await res.text()).not.toContain('"name"');
      }
      const doc = (await (await get('/sw/swagger.json')).json()) as {
        swagger: string;
        paths: Record<
          string,
          Record<
            string,
            {
              operationId: string;
              parameters: Array<{
                name: string;
                in: string;
                type?: string;
                collectionFormat?: string;
              }>;
              responses: Record<string, { schema: { $ref?: string } }>;
            }
          >
        >;
        definitions: Record<string, { properties?: Record<string, unknown> }>;
      };
      expect(doc.swagger).toBe('2.0');
      expect(await (await get('/docs/swagger.json')).json()).toEqual(doc);
      // The OpenAPI 3.1 document beside it, offered by swagger-ui's definition picker.
      const v3 = (await (await get('/sw/openapi.json')).json()) as {
        openapi: string;
        paths: Record<string, unknown>;
      };
      expect(v3.openapi).toBe('3.1.0');
      expect(v3.paths).toHaveProperty(['/v1/shelves/{name}', 'get']);
      expect(await (await get('/docs/openapi.json')).json()).toEqual(v3);
      expect(await (await get('/sw/swagger-initializer.js')).text()).toContain('openapi.json');
      const getShelf = doc.paths['/v1/{name}']!['get']!;
      expect(getShelf.operationId).toBe('Library_GetShelf');
      expect(getShelf.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'name', in: 'path' }),
          expect.objectContaining({ name: 'minBooks', in: 'query', type: 'string' }),
          expect.objectContaining({
            name: 'tags',
            in: 'query',
            type: 'array',
            collectionFormat: 'multi',
          }),
          expect.objectContaining({ name: 'filter.authorName', in: 'query' }),
        ]),
      );
      expect(getShelf.responses['200']!.schema.$ref).toBe('#/definitions/v1Shelf');
      expect(getShelf.responses['default']!.schema.$ref).toBe('#/definitions/rpcStatus');
      expect(doc.paths['/v1/legacy/shelves/{name}']!['get']!.operationId).toBe('Library_GetShelf2');
      expect(doc.paths['/v1/shelves/{shelf}/books']!['post']!.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'body', in: 'body' })]),
      );
      expect(
        doc.paths['/v1/books/{book.id}']!['patch']!.parameters.find((p) => p.in === 'body')!.name,
      ).toBe('book');
      // protoc-gen-openapiv2 writes no operation for a custom HTTP method (Swagger 2.0 has none).
      expect(doc.paths['/v1/search/{path}']).toEqual({});
      expect(doc.paths['/test.v1.Library/Ping']!['post']).toBeDefined();
      expect(doc.definitions['v1Book']!.properties).toHaveProperty('authors');
      expect(doc.definitions['v1Genre']).toEqual({
        type: 'string',
        enum: ['GENRE_UNSPECIFIED', 'FICTION', 'SCIENCE'],
        default: 'GENRE_UNSPECIFIED',
      });
    } finally {
      await h.stop();
    }
  });

  it('leaves the UIs and /metrics off unless enabled', async () => {
    const app = await boot({
      configText: `logger:\n  - name: q\n    level: warn\ngrpc:\n  - name: g\n    port: 0\n    loggerEntry: q\n`,
      argv: [],
    });
    await app.bootstrap();
    const port = grpcEntry(app, 'g').port;
    try {
      for (const p of ['/sw/', '/docs/', '/metrics'])
        expect((await fetch(`http://127.0.0.1:${port}${p}`)).status, p).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      await app.shutdown();
    }
  });
});
