import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { grpcEntry, grpcPlugin } from '@svcboot/entry-grpc';
// The served entry's middleware.jwt (svc itself reads the guards without it).
import '@svcboot/middleware-jwt';
import { onFreePort, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { writeOpenApi } from './openapi.js';

// `svc pb openapi` against the oracle: the same boot.yaml booted in this process, its entry
// serving /sw/swagger.json and /sw/openapi.json on the boot.yaml's port while svc runs (so svc
// can neither listen on that port nor need to). The project lives inside the workspace, so it
// resolves @svcboot/entry-grpc as an installed service would.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));

const GREETER_PROTO = `syntax = "proto3";

// The fixture's API.
package fixture.v1;

// Says hello.
service Greeter {
  // Greets someone by name.
  rpc Hello(HelloRequest) returns (HelloReply);
  // Streams greetings (bound by no rule: an unbound method).
  rpc Watch(HelloRequest) returns (stream HelloReply);
}

// Administration.
service Admin {
  rpc Reset(ResetRequest) returns (ResetReply);
}

message HelloRequest {
  // Who to greet.
  string user_name = 1;
  repeated string tags = 2;
}

message HelloReply {
  string message = 1;
  Mood mood = 2;
}

enum Mood {
  MOOD_UNSPECIFIED = 0;
  MOOD_HAPPY = 1;
}

message ResetRequest {
  bool hard = 1;
}

message ResetReply {}
`;

const MAPPING = `type: google.api.Service
config_version: 3
http:
  rules:
    - selector: fixture.v1.Greeter.Hello
      get: /v1/hello/{user_name}
      additional_bindings:
        - post: /v1/hello
          body: "*"
`;

let project: string;
let port: number;
let app: App | undefined;

function bootYaml(): string {
  return `app:
  description: the openapi fixture
logger:
  - name: quiet
    outputPaths: ["${path.join(project, 'service.log')}"]
grpc:
  - name: greeter
    port: ${port}
    loggerEntry: quiet
    generateUnboundMethods: \${UNBOUND:-true}
    sw:
      enabled: true
      simpleOperationIds: \${SIMPLE_IDS:-true}
      enumsAsInts: true
    protos:
      files: [api/v1/greeter.proto]
      includeDirs: [api]
    gwMappingFiles: [api/gateway.yaml]
    # Runtime settings svc does not need: the secrets below are unset when svc runs.
    shutdownTimeoutMs: \${FIXTURE_SHUTDOWN_MS}
    middleware:
      jwt:
        enabled: true
        symmetric: { token: "\${FIXTURE_JWT_SECRET}" }
        ignore: [/sw/, /fixture.v1.Admin/]
      auth:
        enabled: true
        basic: ["admin:\${FIXTURE_ADMIN_PASS}"]
        ignore: [/sw/]
`;
}

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  project = await mkdtemp(path.join(parent, 'openapi-'));
  await mkdir(path.join(project, 'api', 'v1'), { recursive: true });
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'openapi-fixture', version: '1.2.3', private: true, type: 'module' }),
  );
  await writeFile(path.join(project, 'api', 'v1', 'greeter.proto'), GREETER_PROTO);
  await writeFile(path.join(project, 'api', 'gateway.yaml'), MAPPING);
  // The file's port is one the oracle listens on: again on another when it was taken first.
  await onFreePort(async (free) => {
    port = free;
    await writeFile(path.join(project, 'boot.yaml'), bootYaml());

    // The oracle: the entry booted from the same file, every service of its protos added.
    const previous = process.cwd();
    process.chdir(project);
    try {
      app = await boot({
        configFile: path.join(project, 'boot.yaml'),
        cwd: project,
        argv: [],
        env: {
          PATH: process.env['PATH'],
          FIXTURE_SHUTDOWN_MS: '5000',
          FIXTURE_JWT_SECRET: 'a-shared-secret-of-at-least-32-bytes!',
          FIXTURE_ADMIN_PASS: 'secret-pass',
        },
        plugins: [grpcPlugin],
      });
      const entry = grpcEntry(app, 'greeter');
      const definitions = loadSync(path.join(project, 'api', 'v1', 'greeter.proto'), {
        includeDirs: [path.join(project, 'api')],
        keepCase: true,
      });
      for (const name of ['fixture.v1.Greeter', 'fixture.v1.Admin'])
        entry.addService(definitions[name] as never, {});
      await app.bootstrap().catch(async (err: unknown) => {
        await app?.shutdown('port taken');
        app = undefined;
        throw err;
      });
    } finally {
      process.chdir(previous);
    }
  });
});

afterAll(async () => {
  await app?.shutdown('test done');
  await rm(project, { recursive: true, force: true });
});

async function served(file: string): Promise<string> {
  return waitFor(
    `the oracle to serve /sw/${file}`,
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/sw/${file}`);
      return res.status === 200 ? res.text() : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

test('the documents svc writes are the ones the booted entry serves, written while its port is taken', async () => {
  const warnings: string[] = [];
  const files = await writeOpenApi(project, 'boot.yaml', path.join('gen', 'openapi'), (l) =>
    warnings.push(l),
  );
  expect(files.map((f) => path.relative(project, f))).toEqual([
    path.join('gen', 'openapi', 'greeter.swagger.json'),
    path.join('gen', 'openapi', 'greeter.openapi.json'),
  ]);
  expect(warnings).toEqual([]);

  const v2 = await readFile(path.join(project, 'gen', 'openapi', 'greeter.swagger.json'), 'utf8');
  const v3 = await readFile(path.join(project, 'gen', 'openapi', 'greeter.openapi.json'), 'utf8');
  const servedV2 = await served('swagger.json');
  const servedV3 = await served('openapi.json');
  expect(JSON.parse(v2)).toEqual(JSON.parse(servedV2));
  expect(JSON.parse(v3)).toEqual(JSON.parse(servedV3));
  expect(v2).toBe(servedV2);

  // What the boot.yaml asked for reached the generator: ${VAR:-default}, the mapping file, unbound
  // methods, the app's name and version from package.json.
  const doc = JSON.parse(v2) as {
    info: Record<string, string>;
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  expect(doc.info).toMatchObject({ title: 'openapi-fixture', version: '1.2.3' });
  expect(doc.paths['/v1/hello/{userName}']?.['get']?.operationId).toBe('Hello');
  expect(Object.keys(doc.paths).sort()).toEqual([
    '/fixture.v1.Admin/Reset',
    '/fixture.v1.Greeter/Watch',
    '/v1/hello',
    '/v1/hello/{userName}',
  ]);
  expect((JSON.parse(v3) as { openapi: string }).openapi).toMatch(/^3\.1\./);
});

test("svc needs none of the runtime secrets, and documents the guards: schemes and each operation's security", async () => {
  for (const name of ['FIXTURE_SHUTDOWN_MS', 'FIXTURE_JWT_SECRET', 'FIXTURE_ADMIN_PASS'])
    expect(process.env[name]).toBeUndefined();
  await writeOpenApi(project, 'boot.yaml', 'secured');
  const doc = JSON.parse(
    await readFile(path.join(project, 'secured', 'greeter.swagger.json'), 'utf8'),
  ) as {
    securityDefinitions: Record<string, unknown>;
    paths: Record<string, Record<string, { security?: unknown }>>;
  };
  expect(Object.keys(doc.securityDefinitions)).toEqual(['bearerAuth', 'basicAuth']);
  expect(doc.paths['/v1/hello/{userName}']?.['get']?.security).toEqual([
    { bearerAuth: [], basicAuth: [] },
  ]);
  // jwt ignores the Admin service: Basic alone.
  expect(doc.paths['/fixture.v1.Admin/Reset']?.['post']?.security).toEqual([{ basicAuth: [] }]);
  const v3 = JSON.parse(
    await readFile(path.join(project, 'secured', 'greeter.openapi.json'), 'utf8'),
  ) as { components: { securitySchemes: Record<string, unknown> } };
  expect(v3.components.securitySchemes['bearerAuth']).toEqual({
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  // Nothing of the secrets (which svc never had) in the documents.
  expect(JSON.stringify(doc)).not.toContain('FIXTURE_');
});

test('svc pb openapi honours the environment of ${VAR:-default} and --out', async () => {
  const before = process.env['SIMPLE_IDS'];
  process.env['SIMPLE_IDS'] = 'false';
  const previous = process.cwd();
  process.chdir(project);
  const lines: string[] = [];
  try {
    expect(
      await main(
        ['pb', 'openapi', '--out', 'docs'],
        (l) => lines.push(l),
        (l) => lines.push(l),
      ),
    ).toBe(0);
  } finally {
    process.chdir(previous);
    if (before === undefined) delete process.env['SIMPLE_IDS'];
    else process.env['SIMPLE_IDS'] = before;
  }
  expect(lines).toEqual([
    `wrote ${path.join('docs', 'greeter.swagger.json')}`,
    `wrote ${path.join('docs', 'greeter.openapi.json')}`,
  ]);
  const doc = JSON.parse(
    await readFile(path.join(project, 'docs', 'greeter.swagger.json'), 'utf8'),
  ) as { paths: Record<string, Record<string, { operationId: string }>> };
  expect(doc.paths['/v1/hello/{userName}']?.['get']?.operationId).toBe('Greeter_Hello');
});

test('a project without @svcboot/entry-grpc (nor @svcboot/openapi) is told what to install', async () => {
  const outside = await mkdtemp(path.join((await import('node:os')).tmpdir(), 'svc-openapi-'));
  try {
    await writeFile(path.join(outside, 'package.json'), '{"name":"bare"}');
    await writeFile(path.join(outside, 'boot.yaml'), 'grpc:\n  - name: g\n    port: 0\n');
    await expect(writeOpenApi(outside, 'boot.yaml', 'out')).rejects.toThrow(
      /cannot load @svcboot\/openapi from .*add @svcboot\/entry-grpc \(which brings it\) or @svcboot\/openapi to the project's dependencies and run npm install/,
    );
  } finally {
    await rm(outside, { recursive: true, force: true });
  }
});
