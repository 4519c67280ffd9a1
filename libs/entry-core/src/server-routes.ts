import type { Registry } from 'prom-client';
import { workersRegistry } from './cluster/metrics.js';
import { inSvcbootWorker, WORKER_ENV } from './cluster/protocol.js';
import type { EntryContext } from './entry.js';
import { CommonService, type HealthAnswers } from './common-service/common-service.js';
import { commonServiceSchema, type CommonServiceConfig } from './common-service/schema.js';
import { ServerRoutes, type ErrorBodyOf, type HttpRoute } from './http/route.js';
import { pprofSchema, type PprofConfig } from './pprof/schema.js';
import { PromPusher } from './prom-pusher/prom-pusher.js';
import type { PromConfig } from './prom-pusher/schema.js';
import { staticSchema, type StaticConfig } from './static/schema.js';

/** `commonService`, `pprof` and `static`: spread into a server entry's schema. */
export const serverRoutesShape = {
  commonService: commonServiceSchema.describe(
    'The common service: GET <pathPrefix>/ready, /alive, /info and /gc (enabled, pathPrefix: /svc/v1)',
  ),
  pprof: pprofSchema.describe(
    "Node's CPU and heap profiles under pprof.path (enabled, path: /pprof/)",
  ),
  static: staticSchema.describe(
    'Static files from a folder or an embedded bundle (enabled, path, sourceType, sourcePath)',
  ),
};

export interface ServerRoutesConfig {
  commonService: CommonServiceConfig;
  pprof: PprofConfig;
  static: StaticConfig;
}

/**
 * The enabled built-in routes of a server entry, in this order: the common service, pprof,
 * static files. Checks the static folder (SVC_STATIC_SOURCE). `health` is the entry's
 * HealthRoutes, whose `/readyz` and `/livez` answers the common service repeats; `errorBody` its
 * error model (default `{"error": message}`).
 */
export async function buildServerRoutes(
  config: ServerRoutesConfig,
  ctx: Pick<EntryContext, 'app' | 'env' | 'configPath'>,
  health: HealthAnswers,
  errorBody?: ErrorBodyOf,
  /** The entry's own routes served the same way, after these (an httpserver's API UIs). */
  extra: readonly HttpRoute[] = [],
): Promise<ServerRoutes> {
  const routes: HttpRoute[] = [];
  if (config.commonService.enabled)
    routes.push(
      new CommonService({
        pathPrefix: config.commonService.pathPrefix,
        app: ctx.app,
        env: ctx.env,
        health,
      }),
    );
  // pprof (node:inspector) and the static files are loaded only when boot.yaml turns them on.
  if (config.pprof.enabled) {
    const { Pprof } = await import('./pprof/pprof.js');
    routes.push(new Pprof({ path: config.pprof.path, maxSeconds: config.pprof.maxSeconds }));
  }
  if (config.static.enabled) {
    const { StaticFiles } = await import('./static/static-files.js');
    routes.push(
      await StaticFiles.open({
        path: config.static.path,
        sourcePath: config.static.sourcePath,
        listing: config.static.listing,
        configPath: `${ctx.configPath}.static`,
      }),
    );
  }
  routes.push(...extra);
  return new ServerRoutes(routes, errorBody);
}

/** Log lines naming where the enabled routes are (`base`: `http://localhost:8080`). */
export function serverRouteAddresses(config: ServerRoutesConfig, base: string): string[] {
  const lines: string[] = [];
  const c = config.commonService;
  if (c.enabled) {
    const p = c.pathPrefix === '/' ? '' : c.pathPrefix;
    lines.push(`CommonService: ${base}${p}/{ready,alive,info,gc}`);
  }
  if (config.pprof.enabled) lines.push(`Pprof: ${base}${config.pprof.path}`);
  if (config.static.enabled) lines.push(`Static: ${base}${config.static.path}`);
  return lines;
}

/**
 * Starts `prom.pusher` when enabled (after the entry listens: the default instance is
 * `<hostname>:<port>`); undefined otherwise. Stop it at the start of the entry's interrupt.
 * With `app.workers` > 1, worker 1 pushes the sum over all workers' registries (the other
 * workers return undefined).
 */
export function startPromPusher(
  prom: PromConfig,
  ctx: Pick<EntryContext, 'app' | 'env' | 'configPath' | 'logger' | 'cert'>,
  registry: Registry,
  port: number,
): PromPusher | undefined {
  const p = prom.pusher;
  if (!p.enabled) return undefined;
  // With app.workers > 1 the first worker pushes the sum over every worker (as /metrics answers),
  // and the others only share their registries for it.
  const summed = workersRegistry(ctx.configPath, registry);
  if (inSvcbootWorker && process.env[WORKER_ENV] !== '1') return undefined;
  const pusher = new PromPusher({
    registry: summed,
    intervalMs: p.intervalMs,
    jobName: p.jobName || ctx.app.name,
    instance: p.instance || `${ctx.env.hostname}:${port}`,
    remoteAddress: p.remoteAddress,
    basicAuth: p.basicAuth,
    ...(p.certEntry ? { tls: ctx.cert(p.certEntry) } : {}),
    configPath: `${ctx.configPath}.prom.pusher`,
    logger: ctx.logger,
  });
  pusher.start();
  ctx.logger.info(`PromPusher: pushing to ${pusher.url.href} every ${p.intervalMs} ms`);
  return pusher;
}
