import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot, ConfigError, type App } from '@svcboot/entry-core';
import {
  Code as ConnectCode,
  ConnectError,
  createClient as createConnectClient,
} from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadRequestSchema,
  Code,
  RpcError,
  grpcEntry,
  typedClient,
  validateDefinition,
} from '../index.js';
import { Shelves, VALID_SHELF } from '../test-support/typed/shelf-validated.js';

interface ShelvesClient {
  createShelf(request: unknown): Promise<{ name: string; capacity: number }>;
  importShelves(requests: AsyncIterable<unknown>): Promise<{ capacity: number }>;
  $close(): void;
}

/** Every request a handler got: validation must keep the invalid ones away. */
const handled: string[] = [];
const implementation = {
  async createShelf(req: { name: string; capacity: number }) {
    handled.push(req.name);
    return { name: req.name, capacity: req.capacity };
  },
  async importShelves(requests: AsyncIterable<{ name: string; capacity: number }>) {
    let capacity = 0;
    for await (const r of requests) {
      handled.push(r.name);
      capacity += r.capacity;
    }
    return { capacity };
  },
};

async function bootShelves(dir: string, validate: boolean, validateOptions = ''): Promise<App> {
  const app = await boot({
    configText: `app:
  name: shelves
logger:
  - name: quiet
    level: error
grpc:
  - name: shelves
    port: 0
    loggerEntry: quiet
    middleware:
      validate: { enabled: ${validate}${validateOptions} }
    sw: { enabled: true }
    grpcWeb: { enabled: true }
`,
    cwd: dir,
    argv: [],
    env: { ...process.env },
  });
  grpcEntry(app, 'shelves').addService(Shelves as never, implementation as never);
  await app.bootstrap();
  return app;
}

describe('middleware.validate: protovalidate rules of typed services', () => {
  let dir: string;
  let app: App;
  let client: ShelvesClient;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-validate-'));
    app = await bootShelves(dir, true);
    const port = grpcEntry(app, 'shelves').port;
    base = `http://127.0.0.1:${port}`;
    client = typedClient(Shelves as never, `127.0.0.1:${port}`) as unknown as ShelvesClient;
  });

  afterAll(async () => {
    client?.$close();
    await app?.shutdown('test');
    await rm(dir, { recursive: true, force: true });
  });

  it('lets a valid request through to the handler', async () => {
    expect(await client.createShelf(VALID_SHELF)).toMatchObject({ name: 'fiction', capacity: 40 });
    expect(handled).toContain('fiction');
  });

  it('answers INVALID_ARGUMENT with a google.rpc.BadRequest naming each field, before the handler', async () => {
    const bad = { ...VALID_SHELF, name: 'not-called', capacity: 0, tags: ['a'], email: 'nope' };
    const err = (await client.createShelf(bad).catch((e: unknown) => e)) as RpcError;
    expect(err).toBeInstanceOf(RpcError);
    expect(err.code).toBe(Code.INVALID_ARGUMENT);
    expect(err.message).toMatch(/^invalid request: email: .+ \(and 2 more\)$/);
    const details = err.findDetail(BadRequestSchema);
    expect(details?.fieldViolations.map((v) => [v.field, v.reason])).toEqual([
      ['email', 'string.email'],
      ['capacity', 'int32.gte_lte'],
      ['tags[0]', 'string.min_len'],
    ]);
    expect(details?.fieldViolations.every((v) => v.description.length > 0)).toBe(true);
    expect(handled).not.toContain('not-called');
  });

  it('checks each message of a client stream', async () => {
    const err = (await client
      .importShelves(
        (async function* () {
          yield { ...VALID_SHELF, name: 'first' };
          yield { ...VALID_SHELF, name: 'second', code: 'lowercase' };
        })(),
      )
      .catch((e: unknown) => e)) as RpcError;
    expect(err.code).toBe(Code.INVALID_ARGUMENT);
    expect(err.findDetail(BadRequestSchema)?.fieldViolations.map((v) => v.field)).toEqual(['code']);
    expect(handled).toContain('first');
    expect(handled).not.toContain('second');
  });

  it('answers the gateway 400 with the BadRequest in the error body, fields in JSON names', async () => {
    const res = await fetch(`${base}/v1/shelves`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...VALID_SHELF, floor: '99', owner: '', name: 'gw-bad' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      code: number;
      details: Array<{ '@type': string; fieldViolations: Array<{ field: string }> }>;
    };
    expect(body.code).toBe(3);
    expect(body.details[0]?.['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    expect(body.details[0]?.fieldViolations.map((v) => v.field)).toEqual(['owner', 'floor']);
    expect(handled).not.toContain('gw-bad');
  });
});

describe('middleware.validate, configured', () => {
  it('checks gRPC-Web calls too: connect-web reads the BadRequest as details', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-validate-'));
    const app = await bootShelves(dir, true);
    try {
      const web = createConnectClient(
        Shelves as never,
        createGrpcWebTransport({ baseUrl: `http://127.0.0.1:${grpcEntry(app, 'shelves').port}` }),
      ) as unknown as { createShelf(r: unknown): Promise<{ name: string }> };
      expect((await web.createShelf({ ...VALID_SHELF, name: 'web-ok' })).name).toBe('web-ok');
      const err = await web
        .createShelf({ ...VALID_SHELF, name: 'web-bad', tags: ['aa', 'bb', 'cc', 'dd'] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(ConnectCode.InvalidArgument);
      const details = (err as ConnectError).findDetails(BadRequestSchema);
      expect(details[0]?.fieldViolations.map((v) => [v.field, v.reason])).toEqual([
        ['tags', 'repeated.max_items'],
      ]);
      expect(handled).toContain('web-ok');
      expect(handled).not.toContain('web-bad');
    } finally {
      await app.shutdown('test');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('leaves the calls on its ignore list unchecked', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-validate-'));
    const app = await bootShelves(dir, true, ', ignore: ["/shelf.v1.Shelves/CreateShelf"]');
    const c = typedClient(
      Shelves as never,
      `127.0.0.1:${grpcEntry(app, 'shelves').port}`,
    ) as unknown as ShelvesClient;
    try {
      expect(await c.createShelf({ name: 'ignored', capacity: 0 })).toMatchObject({
        name: 'ignored',
      });
      // The other method is still checked.
      const err = (await c
        .importShelves(
          (async function* () {
            yield { ...VALID_SHELF, name: 'still-checked', code: 'x' };
          })(),
        )
        .catch((e: unknown) => e)) as RpcError;
      expect(err.code).toBe(Code.INVALID_ARGUMENT);
      expect(handled).not.toContain('still-checked');
    } finally {
      c.$close();
      await app.shutdown('test');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives the usual config error for an unknown key, with its path', async () => {
    const err = await boot({
      configText:
        'grpc:\n  - name: shelves\n    port: 0\n    middleware:\n      validate: { enabled: true, failFast: true }\n',
      argv: [],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String((err as Error).message)).toContain('grpc[shelves].middleware.validate.failFast');
  });

  it('refuses an entry other than grpc, which has no typed services to check', () => {
    expect(() =>
      validateDefinition.create({ enabled: true, ignore: [] }, {} as never, {
        entryName: 'web',
        entryType: 'HttpEntry',
        registry: {} as never,
        configPath: 'httpserver[web].middleware.validate',
      }),
    ).toThrow(
      /^httpserver\[web\]\.middleware\.validate: validate checks the requests of typed gRPC services/,
    );
  });

  it('is no longer an entry option (validate.enabled)', async () => {
    const err = await boot({
      configText: 'grpc:\n  - name: shelves\n    port: 0\n    validate: { enabled: true }\n',
      argv: [],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String((err as Error).message)).toContain('grpc[shelves].validate');
  });
});

describe('the OpenAPI documents of a typed service with buf.validate rules', () => {
  it('carry the constraints: lengths, pattern, formats, bounds, item counts, required', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-validate-'));
    const app = await bootShelves(dir, true);
    try {
      const entry = grpcEntry(app, 'shelves');
      const v2 = JSON.parse(entry.openApiDocument) as {
        definitions: Record<string, { properties: Record<string, unknown>; required?: string[] }>;
      };
      const req = v2.definitions['v1CreateShelfRequest']!;
      expect(req.properties).toMatchObject({
        name: { type: 'string', minLength: 1, maxLength: 20 },
        email: { type: 'string', format: 'email' },
        id: { type: 'string', format: 'uuid' },
        capacity: { type: 'integer', format: 'int32', minimum: 1, maximum: 100 },
        tags: { type: 'array', maxItems: 3, items: { type: 'string', minLength: 2 } },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
        price: { type: 'number', format: 'double', minimum: 0, exclusiveMinimum: true },
        website: { type: 'string', format: 'uri' },
        floor: { type: 'string', format: 'int64', minimum: 0, maximum: 50 },
      });
      expect(req.required).toEqual(['owner']);
      const v3 = JSON.parse(entry.openApiV3Document) as {
        paths: Record<
          string,
          Record<
            string,
            {
              requestBody: {
                content: Record<string, { schema: { properties: unknown; required?: string[] } }>;
              };
            }
          >
        >;
      };
      // OpenAPI 3.1: the body-'*' request inline, exclusiveMinimum a number.
      const req3 =
        v3.paths['/v1/shelves']!['post']!.requestBody.content['application/json']!.schema;
      expect(req3.properties).toMatchObject({
        name: { minLength: 1, maxLength: 20 },
        price: { exclusiveMinimum: 0 },
        tags: { maxItems: 3, items: { minLength: 2 } },
      });
      expect(req3.required).toEqual(['owner']);
    } finally {
      await app.shutdown('test');
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('validate off (the default)', () => {
  it('hands the handler what it was sent', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-validate-'));
    const app = await bootShelves(dir, false);
    const c = typedClient(
      Shelves as never,
      `127.0.0.1:${grpcEntry(app, 'shelves').port}`,
    ) as unknown as ShelvesClient;
    try {
      expect(await c.createShelf({ name: 'unchecked', capacity: 0 })).toMatchObject({
        name: 'unchecked',
      });
    } finally {
      c.$close();
      await app.shutdown('test');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
