import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { Registry } from 'prom-client';
import type { CallMiddleware, Entry, EntryContext, LifecycleContext } from '@svcboot/entry-core';
import { basicTransport } from '@svcboot/entry-core/internal/middleware/transport';
import {
  buildCallChain,
  type PlacedMiddleware,
} from '@svcboot/entry-core/internal/middleware/options';
import {
  errorBody,
  googleStatusName,
  grpcStatusOfHttp,
} from '@svcboot/entry-core/internal/middleware/error-model';
import type { CallChain } from '@svcboot/entry-core/internal/middleware/call';
import type { MiddlewarePlace } from '@svcboot/entry-core';
import {
  buildServerRoutes,
  serverRouteAddresses,
  startPromPusher,
} from '@svcboot/entry-core/internal/server-routes';
import type { PromPusher } from '@svcboot/entry-core/internal/prom-pusher/prom-pusher';
import type { ServerRoutes } from '@svcboot/entry-core/internal/http/route';
import { collectProcessMetrics, HealthRoutes } from '@svcboot/entry-core/internal/health-routes';
import { workersRegistry } from '@svcboot/entry-core/internal/cluster/metrics';
import { IdleConnections } from '@svcboot/entry-core/internal/http/idle-connections';
import {
  ListenerQuiet,
  LISTENER_QUIET_MAX_MS,
} from '@svcboot/entry-core/internal/http/quiet-listener';
import { reloadServerEntry } from '@svcboot/entry-core/internal/reload/server-reload';
import type { ConfigChange, EntryReload } from '@svcboot/entry-core/internal/reload/entry-reload';
import { loadSheddingOf } from '@svcboot/entry-core/internal/overload/load-shedding';
import type { HttpEntryConfig } from './schema.js';
import { apiUis } from './api-ui.js';
import { httpError } from './errors.js';
import { readBody } from './body.js';
import { callMiddleware, errorResponder } from './call-adapter.js';
import { compression } from './compression.js';
import { shedAtDoor } from './door.js';

export const HTTP_ENTRY_TYPE = 'HttpEntry';

/** An `httpserver:` entry: a Koa app whose routes the application registers on `router`. */
export class HttpEntry implements Entry {
  readonly type = HTTP_ENTRY_TYPE;
  readonly name: string;
  readonly description: string;
  readonly shutdownTimeoutMs: number;
  /** The Koa app, for extra middleware (`koa.use`) before bootstrap. */
  readonly koa = new Koa({ proxy: false });
  /** Where the application registers its routes. */
  readonly router = new Router();
  /** This entry's metrics registry (served at `prom.path` when `prom.enabled`). */
  readonly registry = new Registry();
  private server: http.Server | undefined;
  private connections: IdleConnections | undefined;
  private quiet: ListenerQuiet | undefined;
  private boundPort = -1;
  private draining = false;
  private readonly added: PlacedMiddleware[] = [];
  private chainBuilt = false;
  private callChain: CallChain | undefined;
  private pusher: PromPusher | undefined;

  constructor(
    private config: HttpEntryConfig,
    private readonly ctx: EntryContext,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.shutdownTimeoutMs = config.shutdownTimeoutMs;
    this.koa.on('error', (err: Error) => {
      this.ctx.logger.error(`request failed: ${this.ctx.redact(err.stack ?? err.message)}`);
    });
  }

  /** The port it listens on, once bootstrapped (the OS's choice when configured as 0). */
  get port(): number {
    if (this.boundPort < 0) throw httpError('SVC_HTTP_NOT_BOOTSTRAPPED', [this.ctx.configPath]);
    return this.boundPort;
  }

  /** The Node server, once bootstrapped. */
  get httpServer(): http.Server | undefined {
    return this.server;
  }

  /**
   * Adds a middleware to the entry's chain in a phase (`'authn'` for a guard that refuses calls
   * by throwing a CallRejection), or at a placement (`{ phase, before?, after? }`). Before bootstrap only.
   */
  useMiddleware(place: MiddlewarePlace, middleware: CallMiddleware): this {
    if (this.chainBuilt)
      throw new Error(
        `http entry "${this.name}": useMiddleware after bootstrap; add middlewares before the app bootstraps`,
      );
    this.added.push({ place, middleware });
    return this;
  }

  /**
   * The plugin's `reload` (entry-core README, "Reload"): `middleware.*` changes live, for the
   * calls that start after it; any other changed option needs a restart.
   */
  planReload(next: HttpEntryConfig, change: ConfigChange<HttpEntryConfig>): EntryReload {
    const plan = reloadServerEntry(this.callChain, next, change);
    return {
      ...plan,
      apply: () => {
        plan.apply();
        this.config = next;
      },
    };
  }

  async bootstrap(): Promise<void> {
    const { config, ctx } = this;
    this.chainBuilt = true;
    const chain = (this.callChain = buildCallChain(config.middleware, ctx, {
      added: this.added,
      entryName: config.name,
      entryType: HTTP_ENTRY_TYPE,
      registry: this.registry,
      // Plain HTTP calls: the basic record payloads, no metric families of their own.
      transport: basicTransport,
      loadShedding: config.loadShedding,
    }));
    // User middleware added with koa.use() before bootstrap runs inside ours.
    const userMiddleware = this.koa.middleware.splice(0);
    const routes = this.healthRoutes();
    // Their errors take the entry's error model, as its own 404s and rejections do.
    const serverRoutes = await buildServerRoutes(
      config,
      ctx,
      routes,
      (e) =>
        errorBody(config.errorModel, {
          httpStatus: e.httpStatus,
          grpcStatus: e.rejectStatus
            ? googleStatusName(e.rejectStatus)
            : grpcStatusOfHttp(e.httpStatus),
          message: e.message,
          requestId: e.requestId,
        }),
      await apiUis(config, ctx),
    );
    const builtin = (method: string, path: string): boolean =>
      routes.serves(method, path) || (method === 'GET' && serverRoutes.builtin(path));
    if (!chain.empty)
      this.koa.use(
        callMiddleware(
          chain,
          config.errorModel,
          builtin,
          config.bodyLimitBytes,
          config.deadlineHeader,
        ),
      );
    if (config.compression.enabled) this.koa.use(compression(config.compression));
    this.koa.use(errorResponder(config.errorModel));
    this.koa.use(this.closeWhileDraining());
    this.koa.use(this.builtinRoutes(routes));
    if (!serverRoutes.empty) this.koa.use(mountServerRoutes(serverRoutes));
    this.koa.use(readBody(config.bodyLimitBytes));
    for (const m of userMiddleware) this.koa.use(m);
    this.koa.use(this.router.routes());
    this.koa.use(this.router.allowedMethods());

    const shedding = chain.empty ? undefined : loadSheddingOf(chain);
    const koaListener = this.koa.callback();
    // Calls load shedding refuses from the signals that need no call are refused before Koa
    // builds its context (what a shed call costs: BENCHMARKS.md, "overload").
    const listener =
      shedding === undefined
        ? koaListener
        : shedAtDoor(koaListener, chain, shedding, config.errorModel, builtin, (err) =>
            this.koa.emit('error', err),
          );
    const server = http.createServer(
      {
        requestTimeout: config.requestTimeoutMs,
        headersTimeout: config.headersTimeoutMs,
        // Node enforces both timeouts on this sweep (30 s by default), far too late for a short headersTimeout.
        connectionsCheckingInterval: Math.max(
          100,
          Math.min(1000, Math.floor(config.headersTimeoutMs / 2)),
        ),
      },
      listener,
    );
    server.keepAliveTimeout = config.keepAliveTimeoutMs;
    // A new connection's request is read a turn after it is accepted: admission holds its queue's
    // next round for it (LoadShedding#connectionAccepted).
    if (shedding !== undefined) server.on('connection', () => shedding.connectionAccepted());
    this.connections = new IdleConnections(server);
    this.quiet = new ListenerQuiet(server);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          httpError(
            'SVC_HTTP_LISTEN_FAILED',
            [config.host, config.port, err.code ?? err.message, err.code === 'EADDRINUSE'],
            { cause: err },
          ),
        );
      };
      server.once('error', onError);
      server.listen(config.port, config.host || undefined, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    ctx.logger.info(`HTTP server listening on port ${this.boundPort}`);
    if (config.prom.enabled)
      ctx.logger.info(`Metrics at http://localhost:${this.boundPort}${config.prom.path}`);
    for (const line of serverRouteAddresses(config, `http://localhost:${this.boundPort}`))
      ctx.logger.info(line);
    if (config.sw.enabled)
      ctx.logger.info(`SwaggerEntry: http://localhost:${this.boundPort}${config.sw.path}`);
    if (config.docs.enabled)
      ctx.logger.info(`DocsEntry: http://localhost:${this.boundPort}${config.docs.path}`);
    this.pusher = startPromPusher(config.prom, ctx, this.registry, this.boundPort);
  }

  bootstrapPayloads(): Record<string, unknown> {
    const p: Record<string, unknown> = {
      ginPort: this.boundPort,
      promEnabled: this.config.prom.enabled,
    };
    if (this.config.prom.enabled) {
      p['promPath'] = this.config.prom.path;
      p['promPort'] = this.boundPort;
    }
    return p;
  }

  /**
   * Stops accepting, lets requests in flight finish (answered with `Connection: close`), closes
   * a keep-alive connection only once it has been idle DRAIN_IDLE_CLOSE_MS with nothing received
   * (see IdleConnections), and cuts what is left when the step's time is up.
   */
  async interrupt(lifecycle: LifecycleContext): Promise<void> {
    // The Pushgateway group is deleted while requests drain, within the same budget.
    const pushed = this.pusher?.stop(lifecycle.signal);
    this.pusher = undefined;
    const server = this.server;
    const connections = this.connections;
    if (!server || !connections) return void (await pushed);
    this.draining = true;
    // Closing the listener resets the connections the kernel holds for it: first a moment with no
    // new one, keep-alive responses meanwhile (ListenerQuiet).
    await this.quiet?.settle({
      maxMs: Math.min(LISTENER_QUIET_MAX_MS, this.shutdownTimeoutMs / 4),
      signal: lifecycle.signal,
    });
    // net.Server's close: http.Server's would close idle keep-alive connections at once, resetting
    // a request a client has just sent on one.
    const closed = new Promise<void>((resolve) =>
      net.Server.prototype.close.call(server, () => resolve()),
    );
    const cut = (): void => connections.closeAll();
    lifecycle.signal.addEventListener('abort', cut, { once: true });
    const sweep = setInterval(() => connections.closeIdle(), 50);
    connections.closeIdle();
    try {
      await closed;
    } finally {
      clearInterval(sweep);
      lifecycle.signal.removeEventListener('abort', cut);
      // Stops http.Server's connection-checking timer (the listener is already closed).
      server.close(() => undefined);
      this.server = undefined;
      this.connections = undefined;
      this.quiet = undefined;
      await pushed;
    }
    // The calls have ended: middlewares flush what they hold (the trace middleware's spans).
    await this.callChain?.close(lifecycle);
  }

  /**
   * While the app drains, responses close their connection, so keep-alive clients reconnect
   * (elsewhere) instead of meeting a reset when the server goes. Checked again after the
   * handler, for requests that were already running when shutdown began. Not while the listener
   * waits to close (ListenerQuiet): a client told to close would reconnect, and the listener's
   * close would reset that connection.
   */
  private closeWhileDraining(): Koa.Middleware {
    const closes = (): boolean => !this.ctx.isReady() && this.quiet?.closesConnections !== false;
    return async (ctx, next) => {
      if (closes()) ctx.set('Connection', 'close');
      await next();
      if (closes() && !ctx.headerSent) ctx.set('Connection', 'close');
    };
  }

  /** /livez, /readyz and `prom.path`: entry-core's HealthRoutes. */
  private healthRoutes(): HealthRoutes {
    const { prom } = this.config;
    if (prom.enabled || prom.pusher.enabled) {
      collectProcessMetrics(this.registry);
      this.ctx.reloads?.register(this.registry);
    }
    return new HealthRoutes({
      isReady: () => this.ctx.isReady(),
      isDraining: () => this.draining,
      dependenciesDown: () => this.ctx.dependenciesDown('readiness'),
      // With app.workers > 1, the sum over every worker's registry (entry-core cluster/metrics.ts).
      ...(prom.enabled
        ? { registry: workersRegistry(this.ctx.configPath, this.registry), metricsPath: prom.path }
        : {}),
    });
  }

  /** The HealthRoutes rendered on Koa. */
  private builtinRoutes(routes: HealthRoutes): Koa.Middleware {
    return async (ctx, next) => {
      const answer = await routes.answer(ctx.method, ctx.path);
      if (!answer) return next();
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    };
  }
}

/**
 * The common service, pprof and static files (entry-core), after /livez, /readyz and metrics:
 * inside the entry's middleware chain (callMiddleware runs first), so a guard can refuse them;
 * the route's template is the call's route (records, metric labels).
 */
function mountServerRoutes(routes: ServerRoutes): Koa.Middleware {
  return async (ctx, next) => {
    const matched = routes.find(ctx.path);
    if (!matched) return next();
    (ctx as Koa.Context & { _matchedRoute?: string })._matchedRoute = matched.template;
    ctx.respond = false;
    try {
      await routes.serve(matched, ctx.req, ctx.res, ctx.path, () => ctx.state.call?.requestId);
    } catch (err) {
      if (ctx.res.headersSent) return void ctx.res.destroy();
      // errorResponder answers it.
      ctx.respond = true;
      throw err;
    }
  };
}
