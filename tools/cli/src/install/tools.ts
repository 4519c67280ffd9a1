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

const npm = (pkg: string): NpmRecipe => ({ kind: 'npm', package: pkg });
const go = (module: string): GoRecipe => ({ kind: 'go', module });
const deb = (pkg: string): DebRecipe => ({ kind: 'deb', package: pkg });

/** One row: the binary is named like the tool unless `bin` says otherwise. */
function tool(
  name: string,
  version: string,
  recipes: Recipe[],
  versionArgs: string[] | undefined,
  summary: string,
  bin = name,
): ToolSpec {
  return {
    name,
    summary: bin === name ? summary : `${bin}: ${summary}`,
    version,
    bins: [bin],
    ...(versionArgs ? { versionArgs } : {}),
    recipes,
  };
}

const GATEWAY = 'github.com/grpc-ecosystem/grpc-gateway/v2';
const GATEWAY_VERSION = '2.27.3';
const V = ['--version'];

export const TOOLS: readonly ToolSpec[] = [
  tool(
    'buf',
    '1.75.0',
    [npm('@bufbuild/buf'), go('github.com/bufbuild/buf/cmd/buf')],
    V,
    'builds, lints and generates code from protobuf modules (buf.yaml, buf.gen.yaml)',
  ),
  tool(
    'cfssl',
    '1.6.5',
    [go('github.com/cloudflare/cfssl/cmd/cfssl'), deb('golang-cfssl')],
    ['version'],
    "CloudFlare's PKI toolkit (certificates for TLS entries)",
  ),
  tool(
    'cfssljson',
    '1.6.5',
    [go('github.com/cloudflare/cfssl/cmd/cfssljson'), deb('golang-cfssl')],
    ['-version'],
    "writes cfssl's JSON output as PEM files",
  ),
  tool('gocov', '1.2.1', [go('github.com/axw/gocov/gocov')], undefined, 'Go test coverage reports'),
  tool(
    'golangci-lint',
    '2.5.0',
    [go('github.com/golangci/golangci-lint/v2/cmd/golangci-lint')],
    V,
    'Go linters runner',
  ),
  tool(
    'mockgen',
    '0.6.0',
    [go('go.uber.org/mock/mockgen'), deb('mockgen')],
    ['-version'],
    'Go mock generator (go.uber.org/mock)',
  ),
  tool(
    'pkger',
    '0.17.1',
    [go('github.com/markbates/pkger/cmd/pkger')],
    undefined,
    'embeds static files into Go binaries',
  ),
  // Debian's protoc needs its shared libraries (a system-wide install); npm ships a static one.
  tool(
    'protobuf',
    '36.2.0',
    [npm('protoc')],
    V,
    'the protocol buffer compiler, with the google/protobuf well-known types',
    'protoc',
  ),
  tool(
    'protoc-gen-doc',
    '1.5.1',
    [go('github.com/pseudomuto/protoc-gen-doc/cmd/protoc-gen-doc')],
    V,
    'documentation (HTML, Markdown, JSON) from .proto comments',
  ),
  tool(
    'protoc-gen-go',
    '1.36.10',
    [go('google.golang.org/protobuf/cmd/protoc-gen-go'), deb('protoc-gen-go')],
    V,
    'Go message code (google.golang.org/protobuf)',
  ),
  tool(
    'protoc-gen-go-grpc',
    '1.5.1',
    [go('google.golang.org/grpc/cmd/protoc-gen-go-grpc'), deb('protoc-gen-go-grpc')],
    V,
    'Go gRPC service code',
  ),
  // Debian's golang-grpc-gateway is v1, which lacks generate_unbound_methods: no deb recipe.
  tool(
    'protoc-gen-grpc-gateway',
    GATEWAY_VERSION,
    [go(`${GATEWAY}/protoc-gen-grpc-gateway`)],
    V,
    'Go REST gateway code (grpc-gateway v2)',
  ),
  tool(
    'protoc-gen-openapiv2',
    GATEWAY_VERSION,
    [go(`${GATEWAY}/protoc-gen-openapiv2`)],
    V,
    'OpenAPI v2 documents from protos (grpc-gateway v2)',
  ),
  tool(
    'swag',
    '1.16.6',
    [go('github.com/swaggo/swag/cmd/swag')],
    V,
    'Swagger documents from Go annotations',
  ),
  tool(
    'protoc-gen-es',
    '2.17.0',
    [npm('@bufbuild/protoc-gen-es')],
    V,
    'TypeScript messages and service descriptors (@bufbuild/protobuf v2)',
  ),
  tool(
    'protoc-gen-ts_proto',
    '2.18.0',
    [npm('ts-proto')],
    undefined,
    'TypeScript messages and grpc-js service definitions (ts-proto)',
  ),
  tool(
    'proto-loader-gen-types',
    '0.8.1',
    [npm('@grpc/proto-loader')],
    V,
    'TypeScript types for @grpc/grpc-js services loaded by @grpc/proto-loader',
  ),
];

export const BUNDLES: readonly BundleSpec[] = [
  {
    name: 'rk-std',
    aliases: ['std'],
    summary:
      'the standard bundle: protoc, the protoc-gen-* plugins, golangci-lint, gocov, swag and buf',
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
    summary:
      'what a TypeScript svcboot service uses: buf, protoc, protoc-gen-es, protoc-gen-ts_proto and proto-loader-gen-types',
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
