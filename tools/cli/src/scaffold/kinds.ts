/**
 * What `svc add <kind>` writes for each kind the svcboot packages declare (declared-kinds.ts,
 * from their package.json): the boot.yaml block, the lines of src/main.ts and the sample entry
 * name. Kinds this file knows get a block that boots as written (or, for a middleware, an example
 * to put under a server entry); a kind a newer package declares gets a commented-out block that
 * points at its README, so every declared kind is addable.
 */
import { DECLARED_KINDS, type DeclaredKind } from './declared-kinds.js';
import * as t from './templates.js';

export type { DeclaredKind } from './declared-kinds.js';

/** The kinds `svc add` accepts, by key. */
export function declaredKind(key: string): DeclaredKind | undefined {
  return DECLARED_KINDS.find((k) => k.key === key);
}

/** Every key `svc add` accepts, entry kinds first. */
export function addableKeys(): string[] {
  return [
    ...DECLARED_KINDS.filter((k) => k.role === 'entry'),
    ...DECLARED_KINDS.filter((k) => k.role === 'middleware'),
  ].map((k) => k.key);
}

/** What `svc add` writes for one kind. */
export interface KindAddition {
  /** The entry's name in boot.yaml and in main.ts (entry kinds). */
  entryName?: string;
  /** Lines appended to boot.yaml (a comment first). */
  block: string[];
  /** Import lines for src/main.ts. */
  imports: string[];
  /** Lines at the top of runApp's callback. */
  use: string[];
  /** A line for svc add's report: what main.ts got. */
  summary: string;
}

const isFeature = (key: string): key is t.Feature =>
  (t.FEATURES as readonly string[]).includes(key);

/** Client entries: a block that boots as written (calls are made lazily) and the getter. */
const CLIENT_BLOCKS: Record<string, { entryName: string; lines: string[]; use: string }> = {
  grpcclient: {
    entryName: 'backend',
    lines: [
      "# A gRPC client (@svcboot/entry-grpcclient): grpcClient(app, 'backend').client(Service, call) in",
      '# src/main.ts makes typed calls (deadline, request id and trace go along). target: dns:///host:port',
      '# (every address it resolves to is used; a Kubernetes Service name), static:///ip:port,ip:port, unix:/path.',
      'grpcclient:',
      '  - name: backend',
      '    enabled: true',
      '    target: "${BACKEND_TARGET:-dns:///localhost:8080}"',
      '    loadBalancing: round_robin',
      '    timeoutMs: 2000',
      '    retry: { maxAttempts: 3, retryableCodes: [UNAVAILABLE] }',
      '    middleware:',
      '      logging: { enabled: true }',
      '      prom: { enabled: true }',
    ],
    use: 'the gRPC client entry "backend" of boot.yaml: backend.client(Service, call).method(request) in a handler.',
  },
  httpclient: {
    entryName: 'api',
    lines: [
      "# An HTTP client (@svcboot/entry-httpclient): httpClient(app, 'api').fetch(path, { call }) in",
      '# src/main.ts (deadline, request id and trace go along; idempotent methods are retried).',
      'httpclient:',
      '  - name: api',
      '    enabled: true',
      '    baseUrl: "${API_BASE_URL:-http://localhost:8081}"',
      '    timeoutMs: 2000',
      '    retry: { maxAttempts: 2 }',
      '    middleware:',
      '      logging: { enabled: true }',
      '      prom: { enabled: true }',
    ],
    use: 'the HTTP client entry "api" of boot.yaml: await api.fetch(\'/v1/path\', { call }) in a handler.',
  },
};

/** Middleware packages: an example for a server entry's `middleware:` (commented out: it needs your values). */
const MIDDLEWARE_EXAMPLES: Record<string, string[]> = {
  jwt: [
    'jwt:',
    '  enabled: true',
    '  symmetric: { token: "${JWT_SECRET}" }   # HS256, at least 32 bytes; or asymmetric: {...} or jwksUrl',
    '  ignore: ["/grpc.health.v1.Health/", "/livez", "/readyz"]',
  ],
  trace: [
    'trace:',
    '  enabled: true',
    '  sampleRatio: 1',
    '  exporter:',
    '    otlp: { enabled: true, endpoint: "${OTLP_ENDPOINT:-http://localhost:4318}" }',
  ],
};

/** The example a middleware's block shows, without its comment marks (for tests: it must load). */
export function middlewareExample(kind: DeclaredKind): string[] {
  return MIDDLEWARE_EXAMPLES[kind.key] ?? [`${kind.key}:`, '  enabled: true'];
}

function grpcAddition(serviceName: string): KindAddition {
  return {
    entryName: 'greeter',
    block: t.bootYamlBlock({ name: serviceName }, 'grpc'),
    imports: [
      t.getterImport('grpc'),
      `import type { ServiceImpl } from '@svcboot/entry-grpc';`,
      `import { Greeter } from './gen/v1/greeter_pb.js';`,
    ],
    use: [
      `  // api.v1.Greeter of api/v1/greeter.proto, typed from src/gen/v1/greeter_pb.ts (\`npm run pb:gen\``,
      '  // rewrites it when the proto changes): one method per RPC, request in, response out.',
      `  const greeter: ServiceImpl<typeof Greeter> = {`,
      '    async hello() {',
      `      return { message: 'Hello from ${serviceName}' };`,
      '    },',
      '  };',
      `  grpcEntry(app, 'greeter').addService(Greeter, greeter);`,
    ],
    summary: "grpcEntry(app, 'greeter').addService(Greeter, greeter)",
  };
}

/** What `svc add` writes for `kind` in the service named `serviceName`. */
export function kindAddition(kind: DeclaredKind, serviceName: string): KindAddition {
  if (kind.key === 'grpc') return grpcAddition(serviceName);
  if (isFeature(kind.key)) {
    const { getter, entryName } = t.FEATURE_PACKAGES[kind.key];
    return {
      entryName,
      block: t.bootYamlBlock({ name: serviceName }, kind.key),
      imports: [t.getterImport(kind.key)],
      use: t.getterUse(kind.key),
      summary: `${getter}(app, '${entryName}')`,
    };
  }
  const client = CLIENT_BLOCKS[kind.key];
  if (client && kind.getter) {
    return {
      entryName: client.entryName,
      block: client.lines,
      imports: [`import { ${kind.getter} } from '${kind.pkg}';`],
      use: [
        `  // ${client.use}`,
        `  const ${client.entryName} = ${kind.getter}(app, '${client.entryName}');`,
      ],
      summary: `${kind.getter}(app, '${client.entryName}')`,
    };
  }
  if (kind.role === 'middleware') {
    return {
      block: [
        `# ${kind.key} (${kind.pkg}, imported in src/main.ts, which makes middleware.${kind.key} configurable):`,
        "# turn it on under a server entry's `middleware:` (grpc or httpserver), e.g.",
        '#   middleware:',
        ...middlewareExample(kind).map((l) => `#     ${l}`),
        `# Its options: ${kind.pkg}'s README.`,
      ],
      imports: [`import '${kind.pkg}'; // registers middleware.${kind.key}`],
      use: [],
      summary: `import '${kind.pkg}'`,
    };
  }
  // A kind of a package newer than these templates: its block is the user's to fill in.
  const getter = kind.getter ?? `${kind.key}Entry`;
  return {
    entryName: kind.key,
    block: [
      `# ${kind.description || kind.key} (${kind.pkg}): ${getter}(app, '${kind.key}') in src/main.ts.`,
      "# Fill in its options from the package's README, then remove the # marks:",
      `# ${kind.key}:`,
      `#   - name: ${kind.key}`,
      '#     enabled: true',
    ],
    imports: [`import { ${getter} } from '${kind.pkg}';`],
    use: [
      `  // Once boot.yaml's ${kind.key} block is filled in: const ${kind.key} = ${getter}(app, '${kind.key}');`,
    ],
    summary: `import { ${getter} }`,
  };
}
