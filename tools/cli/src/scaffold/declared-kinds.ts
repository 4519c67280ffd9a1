// Written by tools/cli/scripts/declared-kinds.mjs from the `svcboot` section of each package's
// package.json (the CLI's build runs it): do not edit.

/** An entry kind or middleware a svcboot package declares. */
export interface DeclaredKind {
  /** The boot.yaml key: top-level for an entry kind, under `middleware:` for a middleware. */
  key: string;
  pkg: string;
  role: 'entry' | 'middleware';
  /** An entry kind's typed getter, exported by its package. */
  getter?: string;
  /** The package's description. */
  description: string;
}

export const DECLARED_KINDS: readonly DeclaredKind[] = [
  {"key":"cache","pkg":"@svcboot/entry-cache","role":"entry","getter":"cacheEntry","description":"svcboot cache entry (boot.yaml key `cache`): a remote tier on Redis and a local in-process LRU tier, either or both"},
  {"key":"columnardb","pkg":"@svcboot/entry-columnar","role":"entry","getter":"columnarEntry","description":"svcboot columnardb entry: ClickHouse connector over HTTP (@clickhouse/client) with autoCreate, dryRun, settings and safe value binding"},
  {"key":"grpc","pkg":"@svcboot/entry-grpc","role":"entry","getter":"grpcEntry","description":"svcboot gRPC entry: gRPC, REST gateway, OpenAPI UI, API docs, metrics and middleware on one port"},
  {"key":"grpcclient","pkg":"@svcboot/entry-grpcclient","role":"entry","getter":"grpcClient","description":"svcboot gRPC client entry: outbound calls with deadline, request id and trace propagation, retries, balancing and a circuit breaker"},
  {"key":"httpclient","pkg":"@svcboot/entry-httpclient","role":"entry","getter":"httpClient","description":"svcboot HTTP client entry: outbound HTTP calls (Node's fetch) with deadline, request id and trace propagation, retries of idempotent methods, a circuit breaker, records and metrics"},
  {"key":"httpserver","pkg":"@svcboot/entry-http","role":"entry","getter":"httpEntry","description":"svcboot HTTP server entry (boot.yaml key `httpserver`): Koa + @koa/router with logging, metrics and meta middleware, health routes and graceful shutdown"},
  {"key":"jwt","pkg":"@svcboot/middleware-jwt","role":"middleware","description":"svcboot jwt middleware: JSON Web Tokens verified with jose (a key, a PEM public key or a JWKS) on gRPC, gateway and httpserver calls"},
  {"key":"kvstore","pkg":"@svcboot/entry-kv","role":"entry","getter":"kvEntry","description":"svcboot kvstore entry: a Redis connector (single node, cluster or sentinel) on ioredis"},
  {"key":"relationaldb","pkg":"@svcboot/entry-sql","role":"entry","getter":"relationalDbEntry","description":"svcboot relationaldb entry: PostgreSQL through Kysely and pg, one typed handle per database"},
  {"key":"trace","pkg":"@svcboot/middleware-trace","role":"middleware","description":"svcboot trace middleware: OpenTelemetry server spans for every call (OTLP, file or Zipkin exporters, W3C or B3 propagation) and client spans for Redis and PostgreSQL"},
];
