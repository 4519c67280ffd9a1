import os from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteAnswer } from '../health-routes.js';
import type { AppInfo, EnvInfo } from '../info.js';
import { isoWithOffset } from '../time.js';
import {
  methodNotAllowed,
  sendError,
  sendJson,
  type HttpRoute,
  type RouteErrors,
  PLAIN_ERRORS,
} from '../http/route.js';

/** What answers `/readyz` and `/livez` (entry-core's HealthRoutes): the common service gives the same answers. */
export interface HealthAnswers {
  answer(method: string | undefined, path: string): RouteAnswer | Promise<RouteAnswer> | undefined;
}

export interface CommonServiceOptions {
  /** `/svc/v1` (no trailing slash). */
  pathPrefix: string;
  app: AppInfo;
  env: EnvInfo;
  /** The entry's `/readyz` and `/livez`, whose answers `ready` and `alive` repeat. */
  health: HealthAnswers;
}

type Name = 'ready' | 'alive' | 'info' | 'gc';
const NAMES: readonly Name[] = ['ready', 'alive', 'info', 'gc'];
const GET_ONLY = ['GET'];

/** When the process started (epoch ms): the start time `info` reports. */
const startedMs = Math.round(performance.timeOrigin);

/**
 * rk-boot's common service, GET only (405 with `Allow: GET` otherwise); `ready` and `alive` are
 * built-in routes (guards such as auth let them through), `info` and `gc` are not:
 * - `<prefix>/ready`: the entry's `/readyz` answer (503 before bootstrap, while draining, and
 *   whenever a readiness check of the app or an entry fails);
 * - `<prefix>/alive`: the entry's `/livez` answer;
 * - `<prefix>/info`: app name, version, description, start time, uptime, pid, Node version,
 *   memory, hostname, region/az/realm/domain;
 * - `<prefix>/gc`: runs a full garbage collection and reports memory before and after; 501 unless
 *   Node runs with `--expose-gc`.
 */
export class CommonService implements HttpRoute {
  private readonly paths: ReadonlyMap<string, Name>;

  constructor(private readonly options: CommonServiceOptions) {
    const prefix = options.pathPrefix === '/' ? '' : options.pathPrefix;
    this.paths = new Map(NAMES.map((n) => [`${prefix}/${n}`, n]));
  }

  match(pathname: string): string | undefined {
    return this.paths.has(pathname) ? pathname : undefined;
  }

  /** `ready` and `alive` are probes: guards let them through, as they do /readyz and /livez. */
  builtin(pathname: string): boolean {
    const name = this.paths.get(pathname);
    return name === 'ready' || name === 'alive';
  }

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    errors: RouteErrors = PLAIN_ERRORS,
  ): Promise<void> {
    const name = this.paths.get(pathname);
    if (name === undefined) return sendError(req, res, errors, 404, 'not found');
    if (req.method !== 'GET') return methodNotAllowed(req, res, errors, GET_ONLY);
    switch (name) {
      case 'ready':
        return this.repeat(req, res, errors, '/readyz');
      case 'alive':
        return this.repeat(req, res, errors, '/livez');
      case 'info':
        return sendJson(req, res, 200, this.info());
      case 'gc':
        return gc(req, res, errors);
    }
  }

  private async repeat(
    req: IncomingMessage,
    res: ServerResponse,
    errors: RouteErrors,
    path: string,
  ): Promise<void> {
    const answer = await this.options.health.answer('GET', path);
    if (!answer) return sendError(req, res, errors, 404, 'not found');
    res.statusCode = answer.status;
    for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
    res.setHeader('Content-Length', Buffer.byteLength(answer.body));
    res.end(answer.body);
  }

  private info(): Record<string, unknown> {
    const { app, env } = this.options;
    const uptimeSec = Math.floor(process.uptime());
    return {
      appName: app.name,
      version: app.version,
      description: app.description,
      keywords: app.keywords ?? [],
      homeUrl: app.homeUrl ?? '',
      docsUrl: app.docsUrl ?? [],
      maintainers: app.maintainers ?? [],
      startTime: isoWithOffset(startedMs),
      upTimeSec: uptimeSec,
      upTimeStr: durationText(uptimeSec),
      pid: process.pid,
      nodeVersion: process.version,
      hostname: os.hostname(),
      memory: process.memoryUsage(),
      region: env.region ?? '',
      az: env.az ?? '',
      realm: env.realm ?? '',
      domain: env.domain,
    };
  }
}

function gc(req: IncomingMessage, res: ServerResponse, errors: RouteErrors): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (typeof collect !== 'function') {
    sendError(req, res, errors, 501, 'gc is not exposed: start node with --expose-gc to use it');
    return;
  }
  const before = process.memoryUsage();
  collect();
  sendJson(req, res, 200, { before, after: process.memoryUsage() });
}

/** `93784` → `1d2h3m4s`. */
export function durationText(totalSec: number): string {
  const d = Math.floor(totalSec / 86_400);
  const h = Math.floor((totalSec % 86_400) / 3600);
  const m = Math.floor((totalSec % 3600) / 60);
  const s = totalSec % 60;
  return `${d ? `${d}d` : ''}${d || h ? `${h}h` : ''}${d || h || m ? `${m}m` : ''}${s}s`;
}
