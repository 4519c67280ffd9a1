/** The files of a new service, as text, from the chosen entry kinds. */
import { SCHEMA_MODELINE } from '../schema/boot-schema.js';

export const FEATURES = [
  'grpc',
  'httpserver',
  'kvstore',
  'cache',
  'relationaldb',
  'columnardb',
] as const;
export type Feature = (typeof FEATURES)[number];

/**
 * The scaffold's catalogue: for each feature, the package whose code the templates write, its
 * typed getter and a sample entry name. The boot.yaml key itself is the package's own
 * (`svcboot.entryKey` in its package.json, checked by feature-packages.test.ts); entry-core keeps
 * no such table.
 */
export const FEATURE_PACKAGES: Record<Feature, { pkg: string; getter: string; entryName: string }> =
  {
    grpc: { pkg: '@svcboot/entry-grpc', getter: 'grpcEntry', entryName: 'greeter' },
    httpserver: { pkg: '@svcboot/entry-http', getter: 'httpEntry', entryName: 'web' },
    kvstore: { pkg: '@svcboot/entry-kv', getter: 'kvEntry', entryName: 'redis' },
    cache: { pkg: '@svcboot/entry-cache', getter: 'cacheEntry', entryName: 'cache' },
    relationaldb: { pkg: '@svcboot/entry-sql', getter: 'relationalDbEntry', entryName: 'db' },
    columnardb: {
      pkg: '@svcboot/entry-columnar',
      getter: 'columnarEntry',
      entryName: 'clickhouse',
    },
  };

export interface ScaffoldInput {
  name: string;
  features: readonly Feature[];
  /** `@svcboot/x` → the dependency spec (a version range or `file:` tarball). */
  svcbootSpec: (pkg: string) => string;
}

const has = (i: ScaffoldInput, f: Feature): boolean => i.features.includes(f);
/** src/main.test.ts is written: it calls Hello, served by gRPC or the HTTP server. */
export const hasTest = (i: Pick<ScaffoldInput, 'features'>): boolean =>
  i.features.includes('grpc') || i.features.includes('httpserver');

export function packageJson(i: ScaffoldInput): string {
  const deps: Record<string, string> = {
    '@svcboot/entry-core': i.svcbootSpec('@svcboot/entry-core'),
  };
  for (const f of i.features)
    deps[FEATURE_PACKAGES[f].pkg] = i.svcbootSpec(FEATURE_PACKAGES[f].pkg);
  // Light on purpose (a first npm install in seconds): tests run on node:test, and protoc-gen-es
  // comes with `svc install` when the protos are generated.
  // The svc command: `svc add`, `svc schema` (npm run schema) and, with gRPC, `svc pb`.
  const devDeps: Record<string, string> = {
    '@svcboot/cli': i.svcbootSpec('@svcboot/cli'),
    '@types/node': '^20.19.0',
    typescript: '~5.9.3',
  };
  // The generated code in src/gen (protoc-gen-es) imports the protobuf runtime.
  if (has(i, 'grpc')) deps['@bufbuild/protobuf'] = '^2.17.0';
  const scripts: Record<string, string> = {
    build: 'tsc -p tsconfig.build.json',
    prestart: 'tsc -p tsconfig.build.json',
    start: 'node dist/main.js',
    typecheck: 'tsc -p tsconfig.json --noEmit',
    schema: 'svc schema --out boot.schema.json',
    // svc dev (@svcboot/cli, a devDependency): rebuilt and restarted on each change, a dashboard.
    dev: 'svc dev',
  };
  // tsconfig.json compiles the tests beside main.js; node:test runs every dist/**/*.test.js, and
  // passes with none (a service whose test was deleted, or one with no server). From dist/, with
  // no argument: Node 20 reads an argument as a path, Node 22+ as a glob. dist/ is emptied first,
  // so that a test deleted from src/ does not run from its old build.
  scripts['pretest'] = `node -e "fs.rmSync('dist', { recursive: true, force: true })"`;
  scripts['test'] = 'tsc -p tsconfig.json && cd dist && node --test';
  if (has(i, 'grpc')) scripts['pb:gen'] = 'svc pb gen';
  const pkg = {
    name: i.name,
    version: '0.1.0',
    private: true,
    description: `${i.name}: a svcboot service`,
    type: 'module',
    engines: { node: '>=20.19' },
    scripts,
    dependencies: sortKeys(deps),
    devDependencies: sortKeys(devDeps),
    // npm 11 runs no dependency's install script unless allowed, and lists the ones it skipped.
    // Under gRPC: protobufjs checks its CLI's versions, @scarf/scarf (swagger-ui-dist) reports
    // the install. The service needs neither; denied here, npm 11 says nothing about them.
    ...(has(i, 'grpc') ? { allowScripts: { '@scarf/scarf': false, protobufjs: false } } : {}),
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function sortKeys(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

export const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "lib": ["ES2023"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "esModuleInterop": true,
    "skipLibCheck": true,
    "isolatedModules": true,
    "verbatimModuleSyntax": true,
    "types": ["node"],
    "outDir": "dist",
    "rootDir": "src"
  },
  "include": ["src/**/*.ts"]
}
`;

export const TSCONFIG_BUILD = `{
  "extends": "./tsconfig.json",
  "exclude": ["src/**/*.test.ts"]
}
`;

/** What each kind's block says above itself. */
const BLOCK_HEADERS: Record<Feature, string[]> = {
  grpc: [
    "# gRPC with the REST gateway (@svcboot/entry-grpc): grpcEntry(app, 'greeter') in src/main.ts.",
  ],
  httpserver: ["# An HTTP server (@svcboot/entry-http): httpEntry(app, 'web') in src/main.ts."],
  kvstore: [
    "# Redis (@svcboot/entry-kv): kvEntry(app, 'redis') in src/main.ts. Several addrs: a cluster;",
    '# with masterName: the sentinels.',
  ],
  cache: [
    "# A two-tier cache (@svcboot/entry-cache): a local LRU in front of Redis; cacheEntry(app, 'cache')",
    '# in src/main.ts. Leave kvstore out (or enabled: false) for the local tier alone.',
  ],
  relationaldb: [
    "# PostgreSQL (@svcboot/entry-sql): relationalDbEntry(app, 'db') in src/main.ts. autoCreate makes",
    '# the database when it is missing.',
  ],
  columnardb: [
    "# ClickHouse over HTTP (@svcboot/entry-columnar): columnarEntry(app, 'clickhouse') in src/main.ts.",
  ],
};

/**
 * The boot.yaml lines of one kind: a comment saying what it is and where the code gets it, then
 * the list with one entry. `svc new` writes one per kind; `svc add` appends one.
 */
export function bootYamlBlock(i: Pick<ScaffoldInput, 'name'>, feature: Feature): string[] {
  const dbName = i.name.replace(/\W/g, '_');
  const lines: Record<Feature, string[]> = {
    grpc: [
      'grpc:',
      '  - name: greeter',
      '    enabled: true',
      '    port: ${GRPC_PORT:-8080}        # gRPC, the REST gateway, /sw, /docs and /metrics',
      '    enableReflection: true',
      '    sw: { enabled: true }',
      '    docs: { enabled: true }',
      '    prom: { enabled: true }',
      '    middleware:',
      '      logging: { enabled: true }',
      '      prom: { enabled: true }',
      '      meta: { enabled: true }',
      '    protos:',
      '      files: [api/v1/greeter.proto]',
      '      includeDirs: [api, third-party/googleapis]',
      '    gwMappingFiles: [api/v1/gw_mapping.yaml]',
    ],
    httpserver: [
      'httpserver:',
      '  - name: web',
      '    enabled: true',
      '    port: ${HTTP_PORT:-8081}',
      '    middleware:',
      '      logging: { enabled: true }',
      '      meta: { enabled: true }',
    ],
    kvstore: [
      'kvstore:',
      '  - name: redis',
      '    enabled: true',
      '    addrs: ["${REDIS_ADDR:-localhost:6379}"]',
      '    pass: ${REDIS_PASS:-}',
    ],
    cache: [
      'cache:',
      '  - name: cache',
      '    enabled: true',
      '    local:',
      '      enabled: true',
      '    kvstore:',
      '      enabled: true',
      '      addrs: ["${REDIS_ADDR:-localhost:6379}"]',
      '      pass: ${REDIS_PASS:-}',
    ],
    relationaldb: [
      'relationaldb:',
      '  - name: db',
      '    enabled: true',
      '    addr: "${PG_ADDR:-localhost:5432}"',
      '    user: "${PG_USER:-postgres}"',
      '    pass: "${PG_PASS:-}"',
      '    database:',
      `      - name: "\${PG_DATABASE:-${dbName}}"`,
      '        autoCreate: true',
    ],
    columnardb: [
      'columnardb:',
      '  - name: clickhouse',
      '    enabled: true',
      '    addr: "${CLICKHOUSE_ADDR:-localhost:8123}"',
      '    user: "${CLICKHOUSE_USER:-default}"',
      '    pass: "${CLICKHOUSE_PASS:-}"',
      '    database:',
      `      - name: "\${CLICKHOUSE_DB:-${dbName}}"`,
      '        autoCreate: true',
    ],
  };
  return [...BLOCK_HEADERS[feature], ...lines[feature]];
}

export function bootYaml(i: ScaffoldInput): string {
  const parts: string[] = [
    SCHEMA_MODELINE,
    `# ${i.name}: the entries this service boots. \${VAR:-default} reads the environment.`,
    '# `svc add <kind>` adds a kind; `npm run schema` rewrites boot.schema.json for the installed ones.',
    'app:',
    `  name: ${i.name}`,
    '  version: 0.1.0',
  ];
  for (const f of i.features) parts.push(...bootYamlBlock(i, f));
  return `${parts.join('\n')}\n`;
}

export const GREETER_PROTO = `syntax = "proto3";

package api.v1;

// Greeter says hello. Its REST mapping is in gw_mapping.yaml.
service Greeter {
  rpc Hello (HelloRequest) returns (HelloResponse) {}
}

message HelloRequest {}

message HelloResponse {
  string message = 1;
}
`;

export const GW_MAPPING = `type: google.api.Service
config_version: 3

http:
  rules:
    - selector: api.v1.Greeter.Hello
      get: /v1/hello
`;

export const BUF_YAML = `version: v2
modules:
  - path: api
  - path: third-party/googleapis
lint:
  use: [STANDARD]
  # The demo's layout (root api/, package api.v1, service Greeter; ARCHITECTURE.md §7) is kept on purpose.
  except: [PACKAGE_DIRECTORY_MATCH, SERVICE_SUFFIX]
  ignore: [third-party/googleapis]
`;

export const BUF_GEN_YAML = `version: v2
plugins:
  # TypeScript messages and service descriptors (@bufbuild/protobuf v2), under src/ so that
  # tsconfig.json (rootDir src) compiles them with the service.
  - local: protoc-gen-es
    out: src/gen
    opt: [target=ts, import_extension=js]
`;

/** The line of src/main.ts whose callback gets the entries (`svc add` writes below it). */
export const RUN_APP_LINE = 'await runApp((app) => {';

/** Connectors are only fetched in main.ts; the servers get handlers there. */
export const isConnector = (f: Feature): boolean => f !== 'grpc' && f !== 'httpserver';

/** `import { kvEntry } from '@svcboot/entry-kv';`: the typed getter (importing the package registers its boot.yaml key). */
export function getterImport(f: Feature): string {
  const { pkg, getter } = FEATURE_PACKAGES[f];
  return `import { ${getter} } from '${pkg}';`;
}

/** A connector's lines in runApp's callback: its entry, typed, for the handlers to use. */
export function getterUse(f: Feature): string[] {
  const { getter, entryName } = FEATURE_PACKAGES[f];
  return [
    `  // The ${f} entry "${entryName}" of boot.yaml, typed; bootstrapped (connected) before the servers start.`,
    `  const ${entryName} = ${getter}(app, '${entryName}');`,
  ];
}

export function mainTs(i: ScaffoldInput): string {
  const lines: string[] = [];
  lines.push(`import { runApp } from '@svcboot/entry-core';`);
  for (const f of i.features) lines.push(getterImport(f));
  if (has(i, 'grpc')) {
    lines.push(
      `import type { ServiceImpl } from '@svcboot/entry-grpc';`,
      `import { Greeter } from './gen/v1/greeter_pb.js';`,
    );
  }
  lines.push('', `export const GREETING = { message: 'Hello from ${i.name}' };`, '');
  if (has(i, 'grpc')) {
    lines.push(
      `// api.v1.Greeter of api/v1/greeter.proto, typed from its generated code (src/gen/v1/greeter_pb.ts;`,
      `// \`npm run pb:gen\` rewrites it when the proto changes): one method per RPC, request in, response out.`,
      `const greeter: ServiceImpl<typeof Greeter> = {`,
      `  async hello() {`,
      `    return GREETING;`,
      `  },`,
      `};`,
      '',
    );
  }
  lines.push(
    '// Boots ./boot.yaml, registers the handlers, and serves until SIGINT or SIGTERM.',
    RUN_APP_LINE,
  );
  for (const f of i.features) if (isConnector(f)) lines.push(...getterUse(f));
  if (has(i, 'grpc')) lines.push(`  grpcEntry(app, 'greeter').addService(Greeter, greeter);`);
  if (has(i, 'httpserver')) {
    lines.push(
      `  httpEntry(app, 'web').router.get('/v1/hello', (ctx) => {`,
      '    ctx.body = GREETING;',
      '  });',
    );
  }
  lines.push('});');
  return `${lines.join('\n')}\n`;
}

export function mainTestTs(i: ScaffoldInput): string {
  const grpc = has(i, 'grpc');
  const http = has(i, 'httpserver');
  return `import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
${grpc ? `import { typedClient } from '@svcboot/entry-grpc';\nimport { Greeter } from './gen/v1/greeter_pb.js';\n` : ''}
// Starts the built service on free ports and calls its Hello (npm test compiles it first).

// A service boots in a few seconds on a busy machine.
const timeout = 60_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(what: string, probe: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(\`\${what}: not ready after \${timeoutMs} ms: \${String(err)}\\n\${output}\`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** GET /v1/hello as JSON, once the server answers 200. */
function getHello(port: number): Promise<unknown> {
  return waitFor('GET /v1/hello', async () => {
    const res = await fetch(\`http://127.0.0.1:\${port}/v1/hello\`);
    if (res.status !== 200) throw new Error(\`status \${res.status}\`);
    return res.json();
  });
}

let service: ChildProcess | undefined;
let output = '';
const ports = { grpc: 0, http: 0 };

before(async () => {
  ports.grpc = await freePort();
  ports.http = await freePort();
  // dist/main.js beside this file, run from the service's folder (its boot.yaml).
  service = spawn(process.execPath, [fileURLToPath(new URL('./main.js', import.meta.url))], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, GRPC_PORT: String(ports.grpc), HTTP_PORT: String(ports.http) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  service.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  service.stderr?.on('data', (b: Buffer) => (output += b.toString()));
});

after(() => {
  service?.kill('SIGTERM');
});
${
  grpc
    ? `
test('Hello over gRPC', { timeout }, async () => {
  // A client typed from the same generated code as the service.
  const client = typedClient(Greeter, \`127.0.0.1:\${ports.grpc}\`);
  try {
    const reply = await waitFor('gRPC Hello', () => client.hello({}));
    assert.equal(reply.message, 'Hello from ${i.name}');
  } finally {
    client.$close();
  }
});

test('Hello over the REST gateway', { timeout }, async () => {
  assert.deepEqual(await getHello(ports.grpc), { message: 'Hello from ${i.name}' });
});
`
    : ''
}${
  http
    ? `
test('Hello over the HTTP server', { timeout }, async () => {
  assert.deepEqual(await getHello(ports.http), { message: 'Hello from ${i.name}' });
});
`
    : ''
}`;
}

export function readme(i: ScaffoldInput): string {
  const grpc = has(i, 'grpc');
  const needs: string[] = [];
  if (has(i, 'kvstore') || has(i, 'cache'))
    needs.push('Redis at `$REDIS_ADDR` (default localhost:6379)');
  if (has(i, 'relationaldb'))
    needs.push('PostgreSQL at `$PG_ADDR` (default localhost:5432, user postgres)');
  if (has(i, 'columnardb'))
    needs.push('ClickHouse HTTP at `$CLICKHOUSE_ADDR` (default localhost:8123)');
  return `# ${i.name}

A svcboot service with: ${i.features.join(', ')}. Made by \`svc new\`.

## Run

\`\`\`sh
npm install
npm start            # builds (tsc) into dist/, then boots ./boot.yaml; Ctrl-C stops it
npm run dev          # svc dev: rebuilds and restarts it on each change, a dashboard on 127.0.0.1:9400
${hasTest(i) ? 'npm test             # compiles, starts dist/main.js on free ports and calls Hello\n' : 'npm test             # compiles and runs the tests of src/**/*.test.ts (none yet)\n'}\`\`\`

In production (a container), build with \`npm run build\` and run \`node dist/main.js\` itself: npm
start hands a SIGTERM to its shell, which ends without passing it on to node.
${has(i, 'grpc') ? '`npx svc deploy`' : "`svc deploy` (svcboot's CLI, @svcboot/cli)"} writes a Dockerfile that does so and
Kubernetes manifests from boot.yaml (svcboot's docs/kubernetes.md).
${needs.length ? `\nIt needs ${needs.join(', ')}.\n` : ''}
## Try it
${
  grpc
    ? `
- REST gateway: \`curl localhost:8080/v1/hello\`
- gRPC: \`grpcurl -plaintext localhost:8080 api.v1.Greeter/Hello\` (reflection is on)
- OpenAPI UI: http://localhost:8080/sw/ · API docs: http://localhost:8080/docs/ · metrics: http://localhost:8080/metrics
`
    : ''
}${has(i, 'httpserver') ? `\n- HTTP server: \`curl localhost:8081/v1/hello\`\n` : ''}
Ports come from \`GRPC_PORT\` / \`HTTP_PORT\` (see boot.yaml).

## boot.yaml

\`boot.schema.json\` is its JSON Schema (boot.yaml's first line names it for the YAML language
server, e.g. VS Code's YAML extension): the editor completes keys, shows each option's
description and default, and flags a misspelt key. \`npm run schema\` rewrites it for the
installed entry kinds.

To add an entry kind (\`kvstore\`, \`cache\`, \`relationaldb\`, \`columnardb\`, \`httpserver\`):
\`npx svc add kvstore\`, then \`npm install\`. It adds the package, a commented block to boot.yaml
and the typed getter to src/main.ts. When the @svcboot packages are in \`vendor/\`, run the svc of
the svcboot clone they came from instead: \`/path/to/svcboot/node_modules/.bin/svc add kvstore\`.
${
  grpc
    ? `
## Protos

- \`api/v1/greeter.proto\`: the Greeter service; \`api/v1/gw_mapping.yaml\`: its REST mapping.
- \`third-party/googleapis\`: google/api and google/rpc protos (\`svc pb vendor\` writes them).
- \`buf.yaml\`, \`buf.gen.yaml\`: the buf workspace and its TypeScript generator (protoc-gen-es).
- \`src/gen/v1/greeter_pb.ts\`: what protoc-gen-es generated from greeter.proto (the messages and
  the \`Greeter\` service descriptor). \`src/main.ts\` registers \`Greeter\` with an implementation
  TypeScript checks against it (\`ServiceImpl<typeof Greeter>\`), and \`src/main.test.ts\` calls it
  with a client typed from it. Commit it with the proto; after changing a proto, generate again:

\`\`\`sh
npx svc install buf protoc-gen-es   # once; or protobuf (protoc) instead of buf; they land in .svc/bin
npm run pb:gen                      # src/gen/**/*_pb.ts and gen/openapi/greeter.swagger.json
npx svc pb lint
\`\`\`
`
    : ''
}`;
}

export const GITIGNORE = `node_modules/
dist/
.svc/
`;
