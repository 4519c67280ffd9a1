/**
 * The one table of installable tools: pinned versions and the recipes that can install each.
 * A tool's recipes are listed in order of preference; the planner takes the first one whose
 * requirements this machine meets.
 */

/** An npm package that ships the tool; its `node_modules/.bin/<bin>` entries are linked. */
export interface NpmRecipe {
  kind: 'npm';
  package: string;
}

/** `go install <module>@v<version>`; the built binary is moved into the bin folder. */
export interface GoRecipe {
  kind: 'go';
  /** The command's module path, without `@version`. */
  module: string;
}

/**
 * A Debian package holding a self-contained (statically linked Go) binary: `apt-get download`
 * and `dpkg-deb -x` into the staging folder, so it needs no root and touches nothing else.
 * The version is Debian's (the table's pin does not apply) unless `--version` names a Debian one.
 */
export interface DebRecipe {
  kind: 'deb';
  package: string;
}

export type Recipe = NpmRecipe | GoRecipe | DebRecipe;
export type RecipeKind = Recipe['kind'];

export interface ToolSpec {
  name: string;
  summary: string;
  /** The pinned version (npm form, no leading `v`; Go recipes add the `v`). */
  version: string;
  /** The executables it puts in the bin folder. */
  bins: readonly string[];
  /** Arguments that make the first binary print its version: a check run before committing. */
  versionArgs?: readonly string[];
  recipes: readonly Recipe[];
}

/** A name for several tools installed together. */
export interface BundleSpec {
  name: string;
  aliases: readonly string[];
  summary: string;
  tools: readonly string[];
}

const GATEWAY = 'github.com/grpc-ecosystem/grpc-gateway/v2';
const GATEWAY_VERSION = '2.27.3';

export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'buf',
    summary: 'buf: builds, lints and generates code from protobuf modules (buf.yaml, buf.gen.yaml)',
    version: '1.75.0',
    bins: ['buf'],
    versionArgs: ['--version'],
    recipes: [
      { kind: 'npm', package: '@bufbuild/buf' },
      { kind: 'go', module: 'github.com/bufbuild/buf/cmd/buf' },
    ],
  },
  {
    name: 'cfssl',
    summary: "cfssl: CloudFlare's PKI toolkit (certificates for TLS entries)",
    version: '1.6.5',
    bins: ['cfssl'],
    versionArgs: ['version'],
    recipes: [
      { kind: 'go', module: 'github.com/cloudflare/cfssl/cmd/cfssl' },
      { kind: 'deb', package: 'golang-cfssl' },
    ],
  },
  {
    name: 'cfssljson',
    summary: "cfssljson: writes cfssl's JSON output as PEM files",
    version: '1.6.5',
    bins: ['cfssljson'],
    versionArgs: ['-version'],
    recipes: [
      { kind: 'go', module: 'github.com/cloudflare/cfssl/cmd/cfssljson' },
      { kind: 'deb', package: 'golang-cfssl' },
    ],
  },
  {
    name: 'gocov',
    summary: 'gocov: Go test coverage reports',
    version: '1.2.1',
    bins: ['gocov'],
    recipes: [{ kind: 'go', module: 'github.com/axw/gocov/gocov' }],
  },
  {
    name: 'golangci-lint',
    summary: 'golangci-lint: Go linters runner',
    version: '2.5.0',
    bins: ['golangci-lint'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'go', module: 'github.com/golangci/golangci-lint/v2/cmd/golangci-lint' }],
  },
  {
    name: 'mockgen',
    summary: 'mockgen: Go mock generator (go.uber.org/mock)',
    version: '0.6.0',
    bins: ['mockgen'],
    versionArgs: ['-version'],
    recipes: [
      { kind: 'go', module: 'go.uber.org/mock/mockgen' },
      { kind: 'deb', package: 'mockgen' },
    ],
  },
  {
    name: 'pkger',
    summary: 'pkger: embeds static files into Go binaries',
    version: '0.17.1',
    bins: ['pkger'],
    recipes: [{ kind: 'go', module: 'github.com/markbates/pkger/cmd/pkger' }],
  },
  {
    name: 'protobuf',
    summary: 'protoc: the protocol buffer compiler, with the google/protobuf well-known types',
    version: '36.2.0',
    bins: ['protoc'],
    versionArgs: ['--version'],
    // Debian's protoc needs its shared libraries (a system-wide install); npm ships a static one.
    recipes: [{ kind: 'npm', package: 'protoc' }],
  },
  {
    name: 'protoc-gen-doc',
    summary: 'protoc-gen-doc: documentation (HTML, Markdown, JSON) from .proto comments',
    version: '1.5.1',
    bins: ['protoc-gen-doc'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'go', module: 'github.com/pseudomuto/protoc-gen-doc/cmd/protoc-gen-doc' }],
  },
  {
    name: 'protoc-gen-go',
    summary: 'protoc-gen-go: Go message code (google.golang.org/protobuf)',
    version: '1.36.10',
    bins: ['protoc-gen-go'],
    versionArgs: ['--version'],
    recipes: [
      { kind: 'go', module: 'google.golang.org/protobuf/cmd/protoc-gen-go' },
      { kind: 'deb', package: 'protoc-gen-go' },
    ],
  },
  {
    name: 'protoc-gen-go-grpc',
    summary: 'protoc-gen-go-grpc: Go gRPC service code',
    version: '1.5.1',
    bins: ['protoc-gen-go-grpc'],
    versionArgs: ['--version'],
    recipes: [
      { kind: 'go', module: 'google.golang.org/grpc/cmd/protoc-gen-go-grpc' },
      { kind: 'deb', package: 'protoc-gen-go-grpc' },
    ],
  },
  {
    name: 'protoc-gen-grpc-gateway',
    summary: 'protoc-gen-grpc-gateway: Go REST gateway code (grpc-gateway v2)',
    version: GATEWAY_VERSION,
    bins: ['protoc-gen-grpc-gateway'],
    versionArgs: ['--version'],
    // Debian's golang-grpc-gateway is v1, which lacks generate_unbound_methods: no deb recipe.
    recipes: [{ kind: 'go', module: `${GATEWAY}/protoc-gen-grpc-gateway` }],
  },
  {
    name: 'protoc-gen-openapiv2',
    summary: 'protoc-gen-openapiv2: OpenAPI v2 documents from protos (grpc-gateway v2)',
    version: GATEWAY_VERSION,
    bins: ['protoc-gen-openapiv2'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'go', module: `${GATEWAY}/protoc-gen-openapiv2` }],
  },
  {
    name: 'swag',
    summary: 'swag: Swagger documents from Go annotations',
    version: '1.16.6',
    bins: ['swag'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'go', module: 'github.com/swaggo/swag/cmd/swag' }],
  },
  {
    name: 'protoc-gen-es',
    summary: 'protoc-gen-es: TypeScript messages and service descriptors (@bufbuild/protobuf v2)',
    version: '2.17.0',
    bins: ['protoc-gen-es'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'npm', package: '@bufbuild/protoc-gen-es' }],
  },
  {
    name: 'protoc-gen-ts_proto',
    summary: 'protoc-gen-ts_proto: TypeScript messages and grpc-js service definitions (ts-proto)',
    version: '2.18.0',
    bins: ['protoc-gen-ts_proto'],
    recipes: [{ kind: 'npm', package: 'ts-proto' }],
  },
  {
    name: 'proto-loader-gen-types',
    summary: 'proto-loader-gen-types: TypeScript types for @grpc/grpc-js services loaded by @grpc/proto-loader',
    version: '0.8.1',
    bins: ['proto-loader-gen-types'],
    versionArgs: ['--version'],
    recipes: [{ kind: 'npm', package: '@grpc/proto-loader' }],
  },
];

export const BUNDLES: readonly BundleSpec[] = [
  {
    name: 'rk-std',
    aliases: ['std'],
    summary: 'the standard bundle: protoc, the protoc-gen-* plugins, golangci-lint, gocov, swag and buf',
    tools: [
      'protobuf',
      'protoc-gen-go',
      'protoc-gen-go-grpc',
      'protoc-gen-grpc-gateway',
      'protoc-gen-openapiv2',
      'protoc-gen-doc',
      'golangci-lint',
      'gocov',
      'swag',
      'buf',
    ],
  },
  {
    name: 'ts',
    aliases: [],
    summary: 'what a TypeScript svcboot service uses: buf, protoc, protoc-gen-es, protoc-gen-ts_proto and proto-loader-gen-types',
    tools: ['buf', 'protobuf', 'protoc-gen-es', 'protoc-gen-ts_proto', 'proto-loader-gen-types'],
  },
];

export function findTool(name: string): ToolSpec | undefined {
  return TOOLS.find((t) => t.name === name || (name === 'protoc' && t.name === 'protobuf'));
}

export function findBundle(name: string): BundleSpec | undefined {
  return BUNDLES.find((b) => b.name === name || b.aliases.includes(name));
}

/** Every name `svc install` accepts, for "did you mean" and help. */
export function installableNames(): string[] {
  return [...TOOLS.map((t) => t.name), ...BUNDLES.flatMap((b) => [b.name, ...b.aliases]), 'help'];
}
