import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  credentials,
  loadPackageDefinition,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry } from './index.js';
import { bufBinary } from '@svcboot/testkit';

const protoRoot = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'test-support',
  'descriptor-set',
);
const shelfProto = path.join(protoRoot, 'shelf/v1/shelf.proto');
/** buf, the pinned release testkit installs once outside the repository. */
const buf = await bufBinary();

type Req = Record<string, unknown>;
type Cb = (err: unknown, value?: unknown) => void;

const implementation = {
  GetBook: (call: { request: Req }, cb: Cb) =>
    cb(null, {
      id: call.request['id'],
      shelf: call.request['shelf'],
      display_title: `title of ${String(call.request['id'])}`,
      published_at: { seconds: 1_700_000_000, nanos: 0 },
      copies: 0,
    }),
  Tag: (call: { request: Req }, cb: Cb) => cb(null, call.request),
  Unbound: (call: { request: Req }, cb: Cb) => cb(null, { ...call.request, shelf: 'unbound' }),
};

let dir: string;
let setFile: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-descset-'));
  setFile = path.join(dir, 'api.binpb');
  // What a project's build step runs: buf compiles what protobufjs's parser rejects.
  execFileSync(buf, ['build', protoRoot, '-o', setFile], { stdio: 'pipe' });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bootWith(protos: string, setup = true): Promise<App> {
  const yaml = `app:
  name: shelves
logger:
  - name: quiet
    level: error
grpc:
  - name: gw
    port: 0
    loggerEntry: quiet
    generateUnboundMethods: true
    protos: ${protos}
`;
  const app = await boot({ configText: yaml, cwd: dir, argv: [], env: { ...process.env } });
  if (setup) {
    const pkg = loadFileDescriptorSetFromBuffer(readFileSync(setFile), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
    });
    grpcEntry(app, 'gw').addService(
      pkg['shelf.v1.Shelves'] as ServiceDefinition,
      implementation as never,
    );
  }
  try {
    await app.bootstrap();
  } catch (err) {
    await app.shutdown('test').catch(() => undefined);
    throw err;
  }
  return app;
}

async function bootError(protos: string): Promise<string> {
  try {
    const app = await bootWith(protos, false);
    await app.shutdown('test');
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('bootstrap succeeded');
}

describe('protos.descriptorSets', () => {
  it('the same proto loads from protos.files (issue 45): its routes and OpenAPI paths are those of the set buf built', async () => {
    const fromSet = await bootWith(`{ descriptorSets: ["${setFile}"] }`);
    const fromProto = await bootWith(`{ files: ["${shelfProto}"], includeDirs: ["${protoRoot}"] }`);
    try {
      const answers = async (a: App): Promise<unknown[]> => {
        const base = `http://127.0.0.1:${grpcEntry(a, 'gw').port}`;
        const calls: Array<[string, RequestInit?]> = [
          ['/v1/books/b1?shelf=q'],
          ['/v1/shelves/s2/books/b2'],
          ['/v1/books/b3:fetch', { method: 'POST', body: '{"shelf":"s3"}' }],
          ['/v1/books/b4', { method: 'PURGE', body: '{"title":"T","labels":{"values":["x"]}}' }],
        ];
        return Promise.all(
          calls.map(async ([p, init]) => {
            const r = await fetch(`${base}${p}`, init);
            return [p, r.status, await r.json()];
          }),
        );
      };
      const want = await answers(fromSet);
      expect(want.map((w) => (w as unknown[])[1])).toEqual([200, 200, 200, 200]);
      expect(await answers(fromProto)).toEqual(want);
      const paths = (a: App) =>
        Object.keys(
          (JSON.parse(grpcEntry(a, 'gw').openApiDocument) as { paths: object }).paths,
        ).sort();
      expect(paths(fromProto)).toEqual(paths(fromSet));
    } finally {
      await fromSet.shutdown('test');
      await fromProto.shutdown('test');
    }
  });

  it('a file protobufjs cannot parse is refused with a hint to compile a descriptor set', async () => {
    const bad = path.join(dir, 'bad.proto');
    await writeFile(bad, 'syntax = "proto3";\nmessage {\n}\n');
    const message = await bootError(`{ files: ["${bad}"] }`);
    expect(message).toMatch(/grpc\[gw\]\.protos\.files: .*illegal/);
    expect(message).toContain('buf build -o api.binpb');
    expect(message).toContain('protos.descriptorSets');
  });

  describe('a set buf built from that proto', () => {
    let app: App;
    let base: string;
    let port: number;
    beforeAll(async () => {
      app = await bootWith(`{ descriptorSets: ["${setFile}"] }`);
      port = grpcEntry(app, 'gw').port;
      base = `http://127.0.0.1:${port}`;
    });
    afterAll(async () => {
      await app.shutdown('test');
    });

    it('serves gRPC calls with a definition loaded from the same set', async () => {
      const pkg = loadPackageDefinition(
        loadFileDescriptorSetFromBuffer(readFileSync(setFile), {
          keepCase: true,
          longs: String,
          defaults: false,
        }),
      ) as unknown as {
        shelf: {
          v1: {
            Shelves: new (
              addr: string,
              creds: ReturnType<typeof credentials.createInsecure>,
            ) => Client &
              Record<string, (r: Req, cb: (e: ServiceError | null, v: Req) => void) => void>;
          };
        };
      };
      const client = new pkg.shelf.v1.Shelves(`127.0.0.1:${port}`, credentials.createInsecure());
      try {
        const reply = await new Promise<Req>((resolve, reject) =>
          client['GetBook']!({ id: 'g1', shelf: 's' }, (e, v) => (e ? reject(e) : resolve(v))),
        );
        expect(reply).toMatchObject({
          id: 'g1',
          shelf: 's',
          display_title: 'title of g1',
          published_at: { seconds: '1700000000' },
        });
      } finally {
        client.close();
      }
    });

    it('serves the rule and each binding of the message-list additional_bindings', async () => {
      const expected = (id: string, shelf: string) => ({
        id,
        shelf,
        title: `title of ${id}`,
        publishedAt: '2023-11-14T22:13:20Z',
        copies: 0,
      });
      const a = await fetch(`${base}/v1/books/b1?shelf=q`);
      expect(a.status).toBe(200);
      expect(await a.json()).toEqual(expected('b1', 'q'));
      const b = await fetch(`${base}/v1/shelves/s2/books/b2`);
      expect(await b.json()).toEqual(expected('b2', 's2'));
      const c = await fetch(`${base}/v1/books/b3:fetch`, {
        method: 'POST',
        body: JSON.stringify({ shelf: 's3' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(c.status).toBe(200);
      expect(await c.json()).toEqual(expected('b3', 's3'));
    });

    it('keeps custom verbs, response_body, json_name and unbound methods from the set', async () => {
      const tag = await fetch(`${base}/v1/books/b4`, {
        method: 'PURGE',
        body: JSON.stringify({ title: 'T', labels: { values: ['x', 'y'] } }),
      });
      expect(tag.status).toBe(200);
      expect(await tag.json()).toEqual({ values: ['x', 'y'] });
      const unbound = await fetch(`${base}/shelf.v1.Shelves/Unbound`, {
        method: 'POST',
        body: JSON.stringify({ id: 'u', title: 'U' }),
      });
      expect(await unbound.json()).toEqual({ id: 'u', shelf: 'unbound', title: 'U' });
      const doc = JSON.parse(grpcEntry(app, 'gw').openApiDocument) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/v1/books/{id}',
          '/v1/shelves/{shelf}/books/{id}',
          '/v1/books/{id}:fetch',
        ]),
      );
    });
  });

  it('fails bootstrap naming the entry and the path of a missing set', async () => {
    const message = await bootError('{ descriptorSets: ["no/such/api.binpb"] }');
    expect(message).toContain(
      'grpc[gw].protos.descriptorSets: no/such/api.binpb: cannot read the descriptor set',
    );
    expect(message).toContain('no such file');
  });

  it('fails bootstrap on a file that is not a binary FileDescriptorSet', async () => {
    const corrupt = path.join(dir, 'corrupt.binpb');
    await writeFile(corrupt, readFileSync(shelfProto));
    const message = await bootError(`{ descriptorSets: ["${corrupt}"] }`);
    expect(message).toContain(
      `grpc[gw].protos.descriptorSets: ${corrupt}: not a binary google.protobuf.FileDescriptorSet`,
    );
    const truncated = path.join(dir, 'truncated.binpb');
    const whole = readFileSync(setFile);
    await writeFile(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    expect(await bootError(`{ descriptorSets: ["${truncated}"] }`)).toContain(
      `${truncated}: not a binary google.protobuf.FileDescriptorSet`,
    );
  });

  it('fails bootstrap on a set built without its imports, naming the missing import', async () => {
    const bare = path.join(dir, 'bare.binpb');
    execFileSync(buf, ['build', protoRoot, '--path', shelfProto, '--exclude-imports', '-o', bare], {
      stdio: 'pipe',
    });
    const message = await bootError(`{ descriptorSets: ["${bare}"] }`);
    expect(message).toContain(
      `grpc[gw].protos.descriptorSets: ${bare}: shelf/v1/shelf.proto imports google/api/annotations.proto, which no descriptor set holds`,
    );
    expect(message).toContain('--include_imports');
  });
});
