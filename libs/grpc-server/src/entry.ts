import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type {
  ConnectionInjector,
  Server,
  ServerInterceptor,
  ServiceDefinition,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { loadSheddingOf } from '@svcboot/entry-core/internal/overload/load-shedding';
import { grpcJs } from '@svcboot/grpc-typed/internal/grpc-js';
import type { DescService } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type { CallMiddleware, Entry, EntryContext, LifecycleContext } from '@svcboot/entry-core';
import { acceptableRequestId, type CallChain } from '@svcboot/entry-core/internal/middleware/call';
import {
  buildCallChain,
  type PlacedMiddleware,
} from '@svcboot/entry-core/internal/middleware/options';
import { serveThroughChain } from '@svcboot/entry-core/internal/http/chain-route';
import type { MiddlewarePlace } from '@svcboot/entry-core';
import {
  buildServerRoutes,
  serverRouteAddresses,
  startPromPusher,
} from '@svcboot/entry-core/internal/server-routes';
import { collectProcessMetrics, HealthRoutes } from '@svcboot/entry-core/internal/health-routes';
import type { PromPusher } from '@svcboot/entry-core/internal/prom-pusher/prom-pusher';
import type { ServerRoutes } from '@svcboot/entry-core/internal/http/route';
import { errorMessage } from '@svcboot/entry-core/internal/errors';
import { workersRegistry } from '@svcboot/entry-core/internal/cluster/metrics';
import { IdleConnections } from '@svcboot/entry-core/internal/http/idle-connections';
import { LISTENER_QUIET_MAX_MS } from '@svcboot/entry-core/internal/http/quiet-listener';
import { reloadServerEntry } from '@svcboot/entry-core/internal/reload/server-reload';
import type { ConfigChange, EntryReload } from '@svcboot/entry-core/internal/reload/entry-reload';
import type Koa from 'koa';
import { Registry } from 'prom-client';
import type protobuf from 'protobufjs';
import { DescriptorPool } from './descriptor-pool.js';
import { addLoaderFiles, descriptorsOf, rootFromDefinitions } from './descriptors.js';
import { listenSecondPort, secondPortOf } from './gw-port.js';
import { fileDescriptorsOf } from './proto-file-descriptors.js';
import type { ServerReflection } from './reflection.js';
import {
  grpcTransport,
  typedClient,
  type ServiceImplementationOf,
  type TypedClient,
  type TypedClientOptions,
} from '@svcboot/grpc-typed';
import { copyComments } from './typed/comments.js';
import { adaptService } from './typed/service.js';
import type { RequestCheck } from './typed/validate.js';
import { gatewayErrorBody } from './error-body.js';
import { FirstCallTimeout } from './grpc-js-connections.js';
// What boot.yaml may leave off (gRPC-Web, Connect, reflection, request validation) is loaded by
// bootstrap with import() only when it is on: a start loads none of their modules otherwise.
// gRPC-Web and Connect are @svcboot/grpc-browser's (browser-protocols.ts loads it).
import { loadBrowserProtocols, type ProtocolAdapter } from './browser-protocols.js';
import { MethodInvoker } from './invoker/invoker.js';
import { nativeServerOverInvoker } from './native/invoke-adapter.js';
import { routeServerStreams } from './route-streams.js';
// The REST gateway and the UIs are @svcboot/grpc-gateway's (gateway-package.ts loads it when
// boot.yaml needs it).
import {
  gatewayNeededBy,
  loadGatewayPackage,
  refuseUpgrade,
  type RestGateway,
  type UiMount,
} from './gateway-package.js';
import { codeOfHttpStatus, codeOfRejection } from './codes.js';
import { grpcError } from './errors.js';
import { HealthService } from './health.js';
import { middlewareInterceptor } from './interceptor.js';
import {
  closeConnectionsWithoutStreams,
  effectiveMaxConnections,
  IdleHttp2Connections,
  RefusedConnections,
} from './connection-limits.js';
import { RequestMessageTimeout } from './request-message-timeout.js';
import { OnePortListener } from './one-port.js';
import {
  loadDescriptorSets,
  readDescriptorSetFiles,
  rootOfFiles,
} from '@svcboot/openapi/internal/api/descriptor-set';
import { loadProtoRoot } from '@svcboot/openapi/internal/api/protos';
import type { GrpcEntryConfig } from './schema.js';
import { ServiceSet, type RegisteredMethod } from './services.js';
import { GRPC_ENTRY_TYPE } from './entry-type.js';

/**
 * Koa, loaded on first use (`entry.koa`, or the first HTTP request for Koa): its CommonJS build,
 * the module its ES wrapper re-exports, so the class is the one `import Koa from 'koa'` gives.
 */
const requireKoa = createRequire(import.meta.url);
/** Koa's `callback()`: it serves HTTP/1.1 and, with `server: node`, HTTP/2 compatibility requests. */
type KoaHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => Promise<void>;

/** `noRecvMsgSizeLimit`: grpc-js's largest message length (2 GiB - 1). */
const NO_RECV_LIMIT = 2_147_483_647;

export { GRPC_ENTRY_TYPE };

/**
 * What to do when protobufjs's .proto parser rejects a file: it refuses some files protoc
 * accepts (e.g. a list of messages as an option value), which a compiled descriptor set avoids.
 */
function parseHint(err: unknown): string {
  const text = errorMessage(err);
  if (!/illegal (token|value|name|string|number|type)|invalid syntax/.test(text)) return '';
  return '. protobufjs cannot parse every file protoc accepts: if protoc or buf accept this file, compile the protos into a descriptor set (`npx svc pb build -o api.binpb`, `buf build -o api.binpb`, or `protoc --include_imports --descriptor_set_out=api.binpb ...`) and list it under protos.descriptorSets instead of protos.files';
}

/**
 * What serves native gRPC on the one port: grpc-js's Server (through a connection injector) or
 * gRPC's wire protocol on node:http2 over the method invoker (`server: node`).
 */
interface GrpcSide {
  /** Takes an HTTP/2 connection (cleartext, or TLS already ended by the listener). */
  http2(socket: Duplex): void;
  /** GOAWAY to every connection; resolves once their calls have ended (or were cut at `graceMs`). */
  drain(graceMs: number): Promise<void>;
  /** Ends what is left. */
  destroy(): void;
}

/**
 * grpc-js's Server behind a connection injector (public API only: the entry owns the listening
 * socket, TLS and the connection limits, and hands grpc-js whole connections).
 */
function grpcJsSide(
  server: Server,
  injector: ConnectionInjector,
  firstCall: FirstCallTimeout | undefined,
): GrpcSide {
  return {
    http2: (socket) => {
      firstCall?.watch(socket as net.Socket);
      injector.injectConnection(socket);
    },
    drain: (graceMs) => {
      // GOAWAY naming the last stream taken; those calls complete, later ones go elsewhere.
      injector.drain(graceMs);
      return new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
    destroy: () => {
      server.forceShutdown();
      injector.destroy();
    },
  };
}

interface Running {
  grpc: GrpcSide;
  grpcWeb: ProtocolAdapter | undefined;
  connect: ProtocolAdapter | undefined;
  httpServer: http.Server;
  connections: IdleConnections;
  listener: OnePortListener;
  port: number;
  /** The rk-boot porting mode's gwPort, when the entry listens there too (gw-port.ts). */
  gwPort: number | undefined;
  /** Timers of connectionIdleTimeoutMs and requestMessageTimeoutMs, stopped at interrupt. */
  timers: Array<{ stop(): void }>;
}

/**
 * A gRPC server, its REST gateway, the OpenAPI and docs UIs, /metrics and health, on one port.
 * Register services and hooks before bootstrap; `port` is known after it.
 */
export class GrpcEntry implements Entry {
  readonly type = GRPC_ENTRY_TYPE;
  private koaApp: Koa | undefined;
  /** Koa's handler with the entry's routes, made on the first request for it (`viaKoa`). */
  private koaHandler: KoaHandler | undefined;
  private koaRoutes: Koa.Middleware | undefined;
  /**
   * The Koa app that serves HTTP/1.1; `koa.use(...)` runs before the entry's own routes. Created
   * on first use: a start whose configuration and code never need it does not load Koa.
   */
  get koa(): Koa {
    if (this.koaApp === undefined) {
      const Application = requireKoa('koa') as typeof Koa;
      this.koaApp = new Application();
    }
    return this.koaApp;
  }
  /** The entry's prom-client registry, served at `prom.path`. */
  readonly registry = new Registry();
  private readonly services = new ServiceSet((err, path, call) =>
    this.ctx.logger.error(
      `${path}: handler failed${call ? ` (request id ${call.requestId})` : ''}: ${this.ctx.redact(
        err instanceof Error ? (err.stack ?? err.message) : String(err),
      )}`,
    ),
  );
  private readonly interceptors: ServerInterceptor[] = [];
  /** The files of the generated services added (and their imports): their only schema. */
  private readonly generated = new DescriptorPool();
  /** Every file of the entry's schema, for reflection (built at bootstrap when it is enabled). */
  private pool: DescriptorPool | undefined;
  /** `middleware.validate`: protovalidate's check of typed services' requests (set at bootstrap). */
  private requestCheck: RequestCheck | undefined;
  private builtChain: CallChain | undefined;
  private readonly added: PlacedMiddleware[] = [];
  private readonly health: HealthService;
  /** The REST gateway (@svcboot/grpc-gateway), when boot.yaml needs it (gateway-package.ts). */
  private gateway: RestGateway | undefined;
  /** Swagger UI and RapiDoc (`sw`, `docs`), built with the gateway. */
  private uis: UiMount[] = [];
  /** The OpenAPI documents (JSON text), built with the gateway; '' without it. */
  private openApi = '';
  private openApiV3 = '';
  /** The protobufjs root describing a service's messages (built at bootstrap). */
  private rootFor: (service: string) => protobuf.Root | undefined = () => undefined;
  private running: Running | undefined;
  private draining = false;
  private bootstrapped = false;
  /** This entry's HealthRoutes (built at bootstrap), whose answers the common service repeats. */
  private healthRoutes: HealthRoutes | undefined;
  /** The common service, pprof and static files, when enabled. */
  private serverRoutes: ServerRoutes | undefined;
  private pusher: PromPusher | undefined;

  constructor(
    config: GrpcEntryConfig,
    private readonly ctx: EntryContext,
  ) {
    this.current = config;
    if (config.prom.enabled || config.middleware.prom.enabled || config.prom.pusher.enabled) {
      collectProcessMetrics(this.registry);
      ctx.reloads?.register(this.registry);
    }
    this.health = new HealthService(
      () => ctx.isReady() && !this.draining && ctx.dependenciesDown('readiness').length === 0,
      (name) => name === 'grpc.health.v1.Health' || this.services.serviceNames().includes(name),
    );
  }

  get name(): string {
    return this.config.name;
  }

  get description(): string {
    return this.config.description;
  }

  get shutdownTimeoutMs(): number {
    return this.config.shutdownTimeoutMs;
  }

  /** The port the entry listens on (the chosen one when `port` is 0). Throws before bootstrap. */
  get port(): number {
    if (!this.running) throw grpcError('SVC_GRPC_NOT_BOOTSTRAPPED', [this.ctx.configPath]);
    return this.running.port;
  }

  /**
   * Adds a service: a generated service (protoc-gen-es, @bufbuild/protobuf v2) with its typed
   * implementation, or a @grpc/proto-loader / grpc-js definition with grpc-js handlers. A typed
   * implementation must have every method (SVC_GRPC_TYPED_MISSING_METHOD otherwise).
   *
   * One signature, not overloads: the implementation's type follows from the definition's
   * (ServiceImplementationOf), so a mismatched typed handler is reported at that handler, with
   * its expected type, rather than as "No overload matches this call" naming grpc-js's overload.
   */
  addService<D extends ServiceDefinition | GenService<GenServiceMethods>>(
    definition: D,
    implementation: ServiceImplementationOf<D>,
  ): this;
  addService(definition: ServiceDefinition | DescService, implementation: object): this {
    this.beforeBootstrap('addService');
    if (isGenerated(definition)) {
      const typed = adaptService(
        definition,
        implementation as Record<string, unknown>,
        this.ctx.logger,
        () => this.requestCheck,
      );
      if (typed.missing.length > 0)
        throw grpcError('SVC_GRPC_TYPED_MISSING_METHOD', [
          this.ctx.configPath,
          definition.typeName,
          typed.missing.join(', '),
        ]);
      this.services.add(typed.definition, typed.implementation);
      this.generated.addGenerated(definition.file);
      return this;
    }
    this.services.add(
      definition as ServiceDefinition,
      implementation as UntypedServiceImplementation,
    );
    return this;
  }

  /**
   * A typed client of a generated service, to this entry over loopback (after bootstrap): for
   * tests and calls between the app's own services. Close it with `$close()`. With TLS on, pass
   * `credentials`.
   */
  typedClient<S extends GenService<GenServiceMethods>>(
    service: S,
    options: TypedClientOptions = {},
  ): TypedClient<S> {
    return typedClient(service, `127.0.0.1:${this.port}`, options);
  }

  /**
   * Adds a middleware to the entry's chain in a phase (`'authn'` for a guard that refuses calls
   * by throwing a CallRejection), or at a placement (`{ phase, before?, after? }`): it runs on gRPC and gateway calls alike.
   */
  useMiddleware(place: MiddlewarePlace, middleware: CallMiddleware): this {
    this.beforeBootstrap('useMiddleware');
    if (this.builtChain)
      throw new Error(
        `grpc entry "${this.config.name}": useMiddleware after the middleware chain was built; add middlewares before bootstrap`,
      );
    this.added.push({ place, middleware });
    return this;
  }

  /** The middleware chain, built on first use (at bootstrap), with the middlewares added by then. */
  private get chain(): CallChain {
    this.builtChain ??= buildCallChain(this.config.middleware, this.ctx, {
      entryName: this.config.name,
      entryType: GRPC_ENTRY_TYPE,
      registry: this.registry,
      transport: grpcTransport,
      added: this.added,
      loadShedding: this.config.loadShedding,
    });
    return this.builtChain;
  }

  /** Adds a grpc-js server interceptor; it runs inside the entry's middleware, for gRPC calls only. */
  addInterceptor(interceptor: ServerInterceptor): this {
    this.beforeBootstrap('addInterceptor');
    this.interceptors.push(interceptor);
    return this;
  }

  /**
   * The OpenAPI 2.0 document (JSON text) built at bootstrap with the gateway; '' when the entry
   * has no gateway (nothing in boot.yaml or the protos needs @svcboot/grpc-gateway: no HTTP rule, no UI).
   */
  get openApiDocument(): string {
    return this.openApi;
  }

  /** The OpenAPI 3.1 document (JSON text) built at bootstrap; '' when it could not be built or the entry has no gateway. */
  get openApiV3Document(): string {
    return this.openApiV3;
  }

  bootstrapPayloads(): Record<string, unknown> {
    const port = this.running?.port ?? this.config.port;
    const c = this.config;
    return {
      docsEnabled: c.docs.enabled,
      docsPath: c.docs.path,
      grpcPort: port,
      gwPort: this.running?.gwPort ?? secondPortOf(this.config) ?? port,
      promEnabled: c.prom.enabled,
      promPath: c.prom.path,
      promPort: port,
      swEnabled: c.sw.enabled,
      swPath: c.sw.path,
    };
  }

  /** The entry's options, as boot.yaml (and the reloads since) gave them. */
  get config(): GrpcEntryConfig {
    return this.current;
  }
  private current: GrpcEntryConfig;

  /**
   * The plugin's `reload` (entry-core README, "Reload"): `middleware.*` changes live, for the
   * calls (gRPC, gateway, gRPC-Web, built-in routes) that start after it; any other changed
   * option needs a restart.
   */
  planReload(next: GrpcEntryConfig, change: ConfigChange<GrpcEntryConfig>): EntryReload {
    const plan = reloadServerEntry(this.builtChain, next, change);
    return {
      ...plan,
      apply: () => {
        plan.apply();
        this.current = next;
      },
    };
  }

  async bootstrap(_lc: LifecycleContext): Promise<void> {
    this.bootstrapped = true;
    const c = this.config;
    const tls = this.tlsMaterial();
    if (c.middleware['validate']?.enabled) {
      try {
        const { protovalidateCheck } = await import('./typed/validate.js');
        this.requestCheck = await protovalidateCheck((err) =>
          this.ctx.logger.error(`request validation failed: ${this.ctx.redact(errorMessage(err))}`),
        );
      } catch (err) {
        throw grpcError('SVC_GRPC_VALIDATE', [this.ctx.configPath, errorMessage(err)], {
          cause: err,
        });
      }
    }
    const gateway = await this.buildGateway();
    this.gateway = gateway;

    const requestTimeout =
      c.requestMessageTimeoutMs > 0
        ? new RequestMessageTimeout(c.requestMessageTimeoutMs)
        : undefined;
    const maxRecv = c.noRecvMsgSizeLimit ? NO_RECV_LIMIT : c.maxRecvMsgSizeBytes;
    const onNode = c.server === 'node';
    const reflection = this.pool
      ? new (await import('./reflection.js')).ServerReflection(this.pool, () => [
          ...this.services.serviceNames(),
          'grpc.health.v1.Health',
        ])
      : undefined;
    // Connect, gRPC-Web (and native gRPC with `server: node`): wire adapters over the method
    // invoker (the entry's methods and health; reflection too when it serves native gRPC).
    const invoker = new MethodInvoker({
      chain: this.chain,
      interceptors: this.interceptors,
      methods: this.invokedMethods(onNode ? reflection : undefined),
      isBuiltin: (path) => path.startsWith('/grpc.health.v1.Health/'),
      requestTimeout,
    });
    const browser =
      c.grpcWeb.enabled || c.connect.enabled
        ? await loadBrowserProtocols(this.ctx.configPath, c.grpcWeb.enabled ? 'grpcWeb' : 'connect')
        : undefined;
    const grpcWeb = c.grpcWeb.enabled
      ? browser?.grpcWeb(invoker, {
          maxRecvMessageBytes: maxRecv,
          maxSendMessageBytes: c.maxSendMsgSizeBytes,
        })
      : undefined;
    const connect = c.connect.enabled
      ? browser?.connect({
          invoker,
          rootFor: this.rootFor,
          maxMessageBytes: maxRecv,
          maxSendMessageBytes: c.maxSendMsgSizeBytes,
          gatewayPost: (path) => gateway?.methodsFor(path).includes('POST') ?? false,
          maxJsonDepth: c.gwOption.maxJsonDepth,
        })
      : undefined;
    let grpc: GrpcSide;
    const timers: { stop(): void }[] = [];
    /** `server: node`: the HTTP/2 server every h2 connection of the port goes to. */
    let h2: http2.Http2Server | undefined;
    let routeNative:
      | ((stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean)
      | undefined;
    if (onNode) {
      if (c.enableChannelz)
        this.ctx.logger.warn(
          `${this.ctx.configPath}.enableChannelz: channelz is grpc-js's server's; with server: node it is off`,
        );
      const native = nativeServerOverInvoker(invoker, {
        maxReceiveMessageBytes: maxRecv,
        maxSendMessageBytes: c.maxSendMsgSizeBytes,
        keepaliveTimeMs: c.keepaliveTimeMs,
        keepaliveTimeoutMs: c.keepaliveTimeoutMs,
        sendEncoding: c.grpcCompression.send,
        compressMinBytes: c.grpcCompression.minBytes,
        compressLevel: c.grpcCompression.level,
        // Shutdown drains in two phases (GOAWAY 2^31-1 and a PING, then GOAWAY naming the last
        // stream taken), as gRPC's C-core, Go and Java servers do: a stream the client opened
        // while the first GOAWAY was on its way is still served, not refused (README).
      });
      const server = http2.createServer(native.http2Options());
      server.on('session', (session) => native.handleSession(session));
      h2 = server;
      closeConnectionsWithoutStreams(server, c.http2FirstStreamTimeoutMs);
      if (c.connectionIdleTimeoutMs > 0)
        timers.push(new IdleHttp2Connections(server, c.connectionIdleTimeoutMs));
      routeNative = (stream, headers) => {
        if (grpcWeb?.serveStream(stream, headers)) return true;
        if (connect?.serveStream(stream, headers)) return true;
        const ct = headers['content-type'];
        if (typeof ct !== 'string' || !isNativeGrpc(ct)) return false;
        native.handleStream(stream, headers);
        return true;
      };
      grpc = {
        http2: (socket) => server.emit('connection', socket),
        drain: (graceMs) => native.shutdown(graceMs),
        destroy: () => undefined,
      };
    } else {
      // What grpc-js's public API cannot do (README, "server: grpc-js"): said once, at bootstrap.
      if (c.grpcCompression.send === 'gzip')
        this.ctx.logger.warn(
          `${this.ctx.configPath}.grpcCompression.send: grpc-js's server cannot compress response messages; with server: grpc-js they go uncompressed (use server: node for gzip)`,
        );
      if (c.grpcWeb.enabled || c.connect.enabled)
        this.ctx.logger.info(
          `${this.ctx.configPath}: with server: grpc-js, gRPC-Web and Connect are served over HTTP/1.1 only (every HTTP/2 connection is grpc-js's); use server: node to serve them over HTTP/2 too`,
        );
      const firstCall =
        c.http2FirstStreamTimeoutMs > 0
          ? new FirstCallTimeout(c.http2FirstStreamTimeoutMs)
          : undefined;
      if (firstCall) timers.push(firstCall);
      const interceptors = [
        ...(firstCall ? [firstCall.interceptor] : []),
        ...(this.chain.empty
          ? this.interceptors
          : [middlewareInterceptor(this.chain), ...this.interceptors]),
      ];
      // Outermost: its status passes the middleware (the record) and grpc-js's own bookkeeping.
      if (requestTimeout) interceptors.push(requestTimeout.interceptor);
      const { Server, ServerCredentials } = grpcJs();
      const server = new Server({
        interceptors,
        'grpc.max_receive_message_length': maxRecv,
        'grpc.max_send_message_length': c.maxSendMsgSizeBytes,
        // grpc-js keeps channelz data (per-call counters, call and socket traces) by default, at a
        // cost of ~10 % of a small unary call; it is only of use with the channelz service added.
        'grpc.enable_channelz': c.enableChannelz ? 1 : 0,
        // One timer per connection: a peer that vanished without a FIN is found and its connection closed.
        'grpc.keepalive_time_ms': c.keepaliveTimeMs,
        'grpc.keepalive_timeout_ms': c.keepaliveTimeoutMs,
        // grpc-js's own idle timer (from the connection's start, refreshed as its streams end).
        ...(c.connectionIdleTimeoutMs > 0
          ? { 'grpc.max_connection_idle_ms': c.connectionIdleTimeoutMs }
          : {}),
      });
      for (const { definition, implementation } of this.services.definitions)
        server.addService(definition, implementation);
      server.addService(this.health.definition, this.health.implementation);
      reflection?.addToServer(server);
      // TLS, when on, is ended by the listener (ALPN picks the protocol), so grpc-js sees plain HTTP/2.
      // Every stream of its connections is grpc-js's: gRPC-Web and Connect over HTTP/2, and calls
      // to methods it does not have (answered before any interceptor, so never recorded), are
      // answered by grpc-js (README, "server: grpc-js").
      const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
      grpc = grpcJsSide(server, injector, firstCall);
    }
    if (requestTimeout) timers.push(requestTimeout);
    const maxConnections = effectiveMaxConnections(c.maxConnections);
    const refusals = new RefusedConnections(this.registry, c.name, maxConnections, (m) =>
      this.ctx.logger.warn(m),
    );

    // Without user Koa middleware nothing has to run before the gateway, so gateway calls skip
    // Koa (its context objects, promise chain and on-finished hooks cost as much as the gateway
    // itself); everything else, and every request when users added middleware, goes through Koa.
    const direct = this.koaApp === undefined || this.koaApp.middleware.length === 0;
    this.koaRoutes = this.routes(direct ? undefined : gateway);
    try {
      // Their errors take the entry's error model, as the gateway's do.
      this.serverRoutes = await buildServerRoutes(c, this.ctx, this.healthRoutes!, (e) =>
        gatewayErrorBody(
          c.errorModel,
          {
            code: e.rejectStatus ? codeOfRejection(e.rejectStatus) : codeOfHttpStatus(e.httpStatus),
            message: e.message,
            details: [],
          },
          e.httpStatus,
          () => e.requestId,
        ),
      );
    } catch (err) {
      grpc.destroy();
      throw err;
    }
    // Koa (its app, the routes as its last middleware, its handler) is made on the first request
    // that goes through it.
    const viaKoa: KoaHandler = (req, res) => (this.koaHandler ?? this.makeKoaHandler())(req, res);
    if (h2 && routeNative) {
      // `server: node`: every HTTP/2 stream is the entry's. The protocols' own (native gRPC,
      // gRPC-Web, Connect) are routed by content type; the rest (a browser's h2 on TLS, an h2c
      // client) become requests of the gateway and Koa through Node's compatibility layer.
      // The HTTP/1.1-only handling (overflow connections, Connection: close) does not apply:
      // an HTTP/2 connection over the limit is refused, and HTTP/2 drains with GOAWAY.
      h2.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
        if (
          direct &&
          gateway &&
          this.serveGateway(
            gateway,
            req as unknown as http.IncomingMessage,
            res as unknown as http.ServerResponse,
          )
        )
          return;
        void viaKoa(req, res);
      });
      // After the 'request' listener: Node adds its compatibility 'stream' listener then.
      routeServerStreams(h2, routeNative);
    }
    const httpServer = http.createServer(
      {
        headersTimeout: this.config.headersTimeoutMs,
        requestTimeout: this.config.requestTimeoutMs,
        // Node enforces both on this sweep (30 s by default), far too late for a short headersTimeout.
        connectionsCheckingInterval: Math.max(
          100,
          Math.min(1000, Math.floor(this.config.headersTimeoutMs / 2)),
        ),
      },
      (req, res) => {
        // A connection over maxConnections is for health checks only, one request.
        if (listener.isOverflow(req.socket)) {
          res.setHeader('Connection', 'close');
          if (!isHealthRequest(req)) {
            res
              .writeHead(503, { 'content-type': 'application/json' })
              .end('{"code":14,"message":"too many connections; retry later"}');
            return;
          }
        }
        // Responses sent while draining (from the app's shutdown on: readiness is false through
        // the drain delay) ask HTTP/1.1 clients to close their connection.
        // Not while the listener waits to close (ListenerQuiet): a client told to close would
        // reconnect, and the listener's close would reset that connection.
        if ((this.draining || !this.ctx.isReady()) && listener.quiet.closesConnections)
          res.setHeader('Connection', 'close');
        if (grpcWeb?.serve(req, res)) return;
        if (connect?.serve(req, res)) return;
        if (direct && gateway && this.serveGateway(gateway, req, res)) return;
        void viaKoa(req, res);
      },
    );
    // WebSocket calls of bidi-streaming bindings (gateway/websocket.ts); other upgrades get 404.
    httpServer.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      if (this.draining)
        refuseUpgrade(
          socket,
          503,
          '{"code":14,"message":"the server is shutting down","details":[]}',
        );
      else if (!gateway?.upgrade(req, socket, head))
        refuseUpgrade(socket, 404, '{"code":5,"message":"Not Found","details":[]}');
    });
    httpServer.keepAliveTimeout = 65_000;
    const connections = new IdleConnections(httpServer);
    // The HTTP server never listens itself (the one-port listener hands it sockets); 'listening' is
    // what makes Node track its connections, which closeIdleConnections and request timeouts need.
    httpServer.emit('listening');

    // A new connection's first request is read a turn after it is accepted: admission holds its
    // queue's next round for it (LoadShedding#connectionAccepted), as entry-http does.
    const shedding = this.chain.empty ? undefined : loadSheddingOf(this.chain);
    const listener = new OnePortListener(
      {
        http2: (socket: Duplex) => grpc.http2(socket),
        http1: (socket: Duplex) => httpServer.emit('connection', socket),
      },
      {
        tls,
        handshakeTimeoutMs: c.handshakeTimeoutMs,
        maxConnections,
        onRefused: () => refusals.refused(),
        ...(shedding === undefined ? {} : { onAccepted: () => shedding.connectionAccepted() }),
      },
    );
    let port: number;
    try {
      port = await listener.listen(c.port);
    } catch (err) {
      for (const t of timers) t.stop();
      grpc.destroy();
      httpServer.close();
      throw grpcError('SVC_GRPC_LISTEN_FAILED', [this.ctx.configPath, c.port, errorMessage(err)], {
        cause: err,
      });
    }
    let gwPort = secondPortOf(c);
    if (gwPort !== undefined) {
      try {
        gwPort = await listenSecondPort(listener, gwPort);
      } catch (err) {
        listener.stopAccepting();
        for (const t of timers) t.stop();
        grpc.destroy();
        httpServer.close();
        throw grpcError(
          'SVC_GRPC_LISTEN_FAILED',
          [`${this.ctx.configPath}.gwPort`, gwPort, errorMessage(err)],
          { cause: err },
        );
      }
    }
    this.running = {
      grpc,
      httpServer,
      connections,
      listener,
      port,
      gwPort,
      grpcWeb,
      connect,
      timers,
    };
    this.logAddresses(port);
    if (gwPort !== undefined)
      this.ctx.logger.info(
        `REST gateway, UIs and built-in routes also listening on port ${gwPort} (gwPort, porting mode)`,
      );
    this.pusher = startPromPusher(c.prom, this.ctx, this.registry, port);
  }

  async interrupt(lc: LifecycleContext): Promise<void> {
    // The Pushgateway group is deleted while calls drain, within the same budget.
    const pushed = this.pusher?.stop(lc.signal);
    this.pusher = undefined;
    const r = this.running;
    if (!r) return void (await pushed);
    this.running = undefined;
    this.draining = true;
    this.health.notify();
    this.health.endWatches();
    // Leave a little of the budget for closing what will not drain by itself.
    const budgetMs = Math.max(0, Math.min(lc.timeoutMs, this.config.shutdownTimeoutMs) - 500);
    const started = Date.now();
    await r.listener.stopAcceptingWhenQuiet({
      maxMs: Math.min(LISTENER_QUIET_MAX_MS, budgetMs / 4),
      signal: lc.signal,
    });
    const graceMs = Math.max(0, budgetMs - (Date.now() - started));
    this.gateway?.closeWebSockets();
    // HTTP/2: GOAWAY naming the last stream taken; those calls complete, later ones go elsewhere.
    r.grpcWeb?.close();
    r.connect?.close();
    const drained = r.grpc.drain(graceMs);
    // HTTP/1.1: a keep-alive connection is closed only once it has been idle a while with
    // nothing received (closeIdleConnections would reset a request just sent on one).
    r.connections.closeIdle();
    const deadline = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, graceMs);
      t.unref();
      lc.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([drained, deadline]);
    const idle = async (): Promise<void> => {
      while (r.listener.openConnections > 0) {
        r.connections.closeIdle();
        await new Promise((res) => setTimeout(res, 20));
      }
    };
    await Promise.race([idle(), deadline]);
    r.grpc.destroy();
    r.httpServer.closeAllConnections();
    // Never listening itself, so close() only stops its connection-checking timer.
    r.httpServer.close();
    r.listener.destroyAll();
    for (const t of r.timers) t.stop();
    await pushed;
    // The calls have ended: middlewares flush what they hold (the trace middleware's spans).
    await this.builtChain?.close(lc);
  }

  /** The methods the invoker serves: the services added, the health service (and reflection). */
  private invokedMethods(reflection?: ServerReflection): Map<string, RegisteredMethod> {
    const builtins = new ServiceSet();
    builtins.add(this.health.definition, this.health.implementation);
    for (const r of reflection?.services() ?? []) builtins.add(r.definition, r.implementation);
    return new Map([...this.services.methods, ...builtins.methods]);
  }

  private beforeBootstrap(what: string): void {
    if (this.bootstrapped) throw grpcError('SVC_GRPC_TOO_LATE', [this.ctx.configPath, what]);
  }

  private tlsMaterial(): { cert: Buffer; key: Buffer } | undefined {
    const t = this.config.tls;
    if (t.certEntry) {
      const { cert, key } = this.ctx.cert(t.certEntry);
      if (!cert || !key)
        throw grpcError('SVC_GRPC_TLS_CERT_ENTRY', [this.ctx.configPath, t.certEntry]);
      return { cert, key };
    }
    if (!t.certFile && !t.keyFile) return undefined;
    if (!t.certFile || !t.keyFile)
      throw grpcError('SVC_GRPC_TLS_INCOMPLETE', [this.ctx.configPath]);
    try {
      return { cert: readFileSync(t.certFile), key: readFileSync(t.keyFile) };
    } catch (err) {
      throw grpcError('SVC_GRPC_TLS_UNREADABLE', [this.ctx.configPath, errorMessage(err)], {
        cause: err,
      });
    }
  }

  private async buildGateway(): Promise<RestGateway | undefined> {
    const c = this.config;
    const cwd = process.cwd();
    let root: protobuf.Root | undefined;
    try {
      root = loadProtoRoot(c.protos.files, c.protos.includeDirs, cwd);
    } catch (err) {
      throw grpcError(
        'SVC_GRPC_PROTOS',
        [`${this.ctx.configPath}.protos.files`, `${errorMessage(err)}${parseHint(err)}`],
        { cause: err },
      );
    }
    let sets: protobuf.Root | undefined;
    try {
      sets = loadDescriptorSets(c.protos.descriptorSets, cwd);
    } catch (err) {
      throw grpcError('SVC_GRPC_DESCRIPTOR_SETS', [this.ctx.configPath, errorMessage(err)], {
        cause: err,
      });
    }
    // Built only for a service found nowhere else (a definition the app loaded itself).
    let fallback: protobuf.Root | undefined | null = null;
    const fallbackRoot = (): protobuf.Root | undefined => {
      if (fallback === null)
        fallback = rootFromDefinitions(this.services.definitions.map((d) => d.definition));
      return fallback;
    };
    // Generated services: their schema is the descriptors embedded in the generated code.
    const generated = this.generated.files;
    const typedRoot =
      generated.length > 0 ? rootOfFiles(generated, 'the generated services') : undefined;
    // Comments are not in generated descriptors: a .proto listed under protos.files gives them.
    if (typedRoot) copyComments(root, typedRoot);
    if (c.enableReflection) this.pool = this.descriptorPool(root, cwd);
    const rootFor = (service: string): protobuf.Root | undefined => {
      if (typedRoot?.lookup(service)) return typedRoot;
      if (root.lookup(service)) return root;
      if (sets?.lookup(service)) return sets;
      const rebuilt = fallbackRoot();
      return rebuilt?.lookup(service) ? rebuilt : undefined;
    };
    this.rootFor = rootFor;
    const pkg = await loadGatewayPackage(
      this.ctx.configPath,
      gatewayNeededBy(c, this.services, rootFor),
      c.grpcWeb.enabled || c.connect.enabled,
    );
    if (!pkg) return undefined;
    const { gateway, uis, openApi, openApiV3 } = await pkg.buildGateway({
      config: c,
      configPath: this.ctx.configPath,
      app: {
        name: this.ctx.app.name,
        version: this.ctx.app.version,
        description: this.ctx.app.description,
      },
      chain: this.chain,
      interceptors: this.interceptors,
      services: this.services,
      rootFor,
      ...(typedRoot ? { typed: { root: typedRoot, files: generated.map((f) => f.proto) } } : {}),
      browserPreflights: c.grpcWeb.enabled || c.connect.enabled,
      warn: (message) => this.ctx.logger.warn(message),
    });
    this.uis = uis;
    this.openApi = openApi;
    this.openApiV3 = openApiV3;
    return gateway;
  }

  /**
   * Every file of the entry's schema as protoc wrote it, for reflection: the generated services'
   * files first, then `protos.descriptorSets`, `protos.files`, and the files of proto-loader
   * definitions found in none of them (their imports worked out from the types they use).
   */
  private descriptorPool(root: protobuf.Root, cwd: string): DescriptorPool {
    const c = this.config;
    const pool = new DescriptorPool();
    for (const f of this.generated.files) pool.addProto(f.proto, f.source, f.bytes);
    for (const f of readDescriptorSetFiles(c.protos.descriptorSets, cwd))
      pool.addBytes(f.bytes, `protos.descriptorSets: ${f.source}`);
    try {
      for (const f of fileDescriptorsOf(root, c.protos.includeDirs, cwd))
        pool.addProto(f, 'protos.files');
    } catch (err) {
      this.ctx.logger.warn(
        `${this.ctx.configPath}.protos.files: reflection cannot describe these files (${errorMessage(err)}); compile them into protos.descriptorSets for full reflection`,
      );
    }
    const known = new Set(pool.services());
    for (const { definition } of this.services.definitions) {
      const name = Object.values(definition)[0]?.path.split('/')[1];
      if (name && !known.has(name)) addLoaderFiles(pool, descriptorsOf(definition), 'addService');
    }
    addLoaderFiles(pool, this.health.fileDescriptorProtos(), 'grpc.health.v1', {
      'grpc_health_v1.proto': 'grpc/health/v1/health.proto',
    });
    return pool;
  }

  /** Koa's handler: the entry's routes after the user's middleware, errors logged as warnings. */
  private makeKoaHandler(): KoaHandler {
    const koa = this.koa;
    if (this.koaRoutes) koa.use(this.koaRoutes);
    koa.on('error', (err: unknown) =>
      this.ctx.logger.warn(`HTTP request failed: ${this.ctx.redact(errorMessage(err))}`),
    );
    this.koaHandler = koa.callback() as KoaHandler;
    return this.koaHandler;
  }

  /** A gateway call outside Koa: true when a binding matched (and the call was answered). */
  private serveGateway(
    gateway: RestGateway,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): boolean {
    try {
      return gateway.handle(req, res);
    } catch (err) {
      // What Koa would do with a throwing middleware: report it and answer 500.
      if (this.koaHandler === undefined) this.makeKoaHandler();
      this.koa.emit('error', err);
      if (res.headersSent) res.destroy();
      else {
        res.statusCode = 500;
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end('Internal Server Error');
      }
      return true;
    }
  }

  /**
   * /metrics, /livez, /readyz, the UIs and, when given (users added Koa middleware), the gateway,
   * after any middleware the user added.
   */
  private routes(gateway: RestGateway | undefined): Koa.Middleware {
    const c = this.config;
    const mounts = this.uis;
    const health = (this.healthRoutes = new HealthRoutes({
      isReady: () => this.ctx.isReady(),
      isDraining: () => this.draining,
      dependenciesDown: () => this.ctx.dependenciesDown('readiness'),
      // With app.workers > 1, the sum over every worker's registry (entry-core cluster/metrics.ts).
      ...(c.prom.enabled
        ? {
            registry: workersRegistry(this.ctx.configPath, this.registry),
            metricsPath: c.prom.path,
          }
        : {}),
    }));
    return async (kctx, next) => {
      const { req, res } = kctx;
      const pathname = kctx.path;
      if (gateway?.handle(req, res)) {
        kctx.respond = false;
        return;
      }
      const answer = await health.answer(req.method, pathname);
      if (answer) {
        kctx.status = answer.status;
        kctx.set(answer.headers);
        kctx.body = answer.body;
        return;
      }
      // The common service, pprof and static files, as calls of the entry's middleware chain.
      const matched = this.serverRoutes?.find(pathname);
      if (matched && this.serverRoutes) {
        kctx.respond = false;
        await serveThroughChain(this.chain, this.serverRoutes, matched, req, res, pathname);
        return;
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        for (const m of mounts) {
          if (await m.serve(pathname, res)) {
            kctx.respond = false;
            return;
          }
        }
      }
      await next();
      if (kctx.status === 404 && kctx.body == null) {
        // grpc-gateway's DefaultRoutingErrorHandler: a path bound only for other methods is
        // 405 → Unimplemented (HTTP 501), or 405 with Allow when gwOption.routing asks for it.
        const allowed = this.gateway?.methodsFor(pathname) ?? [];
        if (allowed.length > 0) {
          const use405 = c.gwOption.routing.methodNotAllowed405;
          const status = use405 ? 405 : 501;
          if (use405) kctx.set('Allow', allowed.join(', '));
          kctx.body = this.routingError(12, 'Method Not Allowed', status, req);
          kctx.status = status;
        } else {
          kctx.body = this.routingError(5, 'Not Found', 404, req);
          kctx.status = 404;
        }
      }
    };
  }

  /** A routing error's body in the entry's error model (grpc-gateway's Status by default). */
  private routingError(
    code: number,
    message: string,
    httpStatus: number,
    req: http.IncomingMessage,
  ): unknown {
    return gatewayErrorBody(
      this.config.errorModel,
      { code, message, details: [] },
      httpStatus,
      () => {
        const incoming = req.headers['x-request-id'];
        return typeof incoming === 'string' && acceptableRequestId(incoming)
          ? incoming
          : randomUUID();
      },
    );
  }

  private logAddresses(port: number): void {
    const c = this.config;
    const scheme = c.tls.certFile || c.tls.certEntry ? 'https' : 'http';
    const base = `${scheme}://localhost:${port}`;
    const log = this.ctx.logger;
    log.info(
      `gRPC and REST gateway listening on port ${port} (${this.gateway?.routeCount ?? 0} gateway routes)`,
    );
    if (c.sw.enabled) log.info(`SwaggerEntry: ${base}${c.sw.path}`);
    if (c.docs.enabled) log.info(`DocsEntry: ${base}${c.docs.path}`);
    if (c.prom.enabled) log.info(`PromEntry: ${base}${c.prom.path}`);
    if (c.enableReflection) log.info(`gRPC reflection enabled on port ${port}`);
    for (const line of serverRouteAddresses(c, base)) log.info(line);
  }
}

/** A generated service descriptor (protoc-gen-es), not a grpc-js definition. */
function isGenerated(d: ServiceDefinition | DescService): d is DescService {
  return (d as DescService).kind === 'service' && Array.isArray((d as DescService).methods);
}

/** A native gRPC request's content type (`application/grpc`, `+proto`, `+json`…), not gRPC-Web's. */
function isNativeGrpc(contentType: string): boolean {
  if (!contentType.startsWith('application/grpc')) return false;
  const next = contentType.charCodeAt(16);
  // 'application/grpc' alone, or followed by '+' or ';'.
  return Number.isNaN(next) || next === 43 || next === 59;
}

/** GET or HEAD of /livez or /readyz: what a connection over maxConnections may ask. */
function isHealthRequest(req: http.IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const p = q < 0 ? url : url.slice(0, q);
  return p === '/livez' || p === '/readyz';
}
