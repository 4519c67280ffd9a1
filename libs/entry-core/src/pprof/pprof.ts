import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import v8 from 'node:v8';
import {
  methodNotAllowed,
  queryOf,
  sendError,
  sendJson,
  type HttpRoute,
  type RouteErrors,
  PLAIN_ERRORS,
} from '../http/route.js';

export interface PprofOptions {
  /** `/pprof/` (with its trailing slash). */
  path: string;
  /** The most `?seconds=` accepts. */
  maxSeconds: number;
}

type Name = 'index' | 'profile' | 'heap' | 'eventloop' | 'handles';
const GET_ONLY = ['GET'];

/**
 * One CPU profile or heap snapshot at a time in the process (the profiler and the heap are the
 * process's, whichever entry is asked): another is refused with 409 until it ends.
 */
let running: string | undefined;

/**
 * Node's equivalent of Go's pprof handlers, under `path` (GET only):
 * - `path`: what is here, as JSON;
 * - `path + 'profile?seconds=N'`: a CPU profile of the next N seconds (default 30, at most
 *   `maxSeconds`) from node:inspector, as a `.cpuprofile` (Chrome DevTools, speedscope);
 * - `path + 'heap'`: a V8 heap snapshot (`.heapsnapshot`), streamed;
 * - `path + 'eventloop?seconds=N'`: event-loop delay over N seconds (default 1) from
 *   perf_hooks.monitorEventLoopDelay, and event-loop utilization;
 * - `path + 'handles'`: the active handles and requests keeping the loop alive, counted by type.
 * A CPU profile or heap snapshot while another runs gets 409.
 */
export class Pprof implements HttpRoute {
  private readonly paths: ReadonlyMap<string, Name>;

  constructor(private readonly options: PprofOptions) {
    const p = options.path;
    this.paths = new Map<string, Name>([
      [p, 'index'],
      [p.slice(0, -1), 'index'],
      [`${p}profile`, 'profile'],
      [`${p}heap`, 'heap'],
      [`${p}eventloop`, 'eventloop'],
      [`${p}handles`, 'handles'],
    ]);
  }

  match(pathname: string): string | undefined {
    return this.paths.has(pathname) ? pathname : undefined;
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
      case 'index':
        return sendJson(req, res, 200, this.index());
      case 'handles':
        return sendJson(req, res, 200, handles());
      case 'eventloop': {
        const seconds = this.seconds(req, res, errors, 1);
        if (seconds !== undefined) await eventLoop(req, res, seconds);
        return;
      }
      case 'profile': {
        const seconds = this.seconds(req, res, errors, 30);
        if (seconds !== undefined && acquire(req, res, errors, 'a CPU profile'))
          await cpuProfile(req, res, errors, seconds).finally(release);
        return;
      }
      case 'heap':
        if (acquire(req, res, errors, 'a heap snapshot')) await heapSnapshot(res).finally(release);
        return;
    }
  }

  private index(): Record<string, unknown> {
    const p = this.options.path;
    return {
      profile: `${p}profile?seconds=30`,
      heap: `${p}heap`,
      eventloop: `${p}eventloop?seconds=1`,
      handles: `${p}handles`,
      running: running ?? null,
    };
  }

  /** `?seconds=`: a whole number from 1 to maxSeconds; otherwise answers 400 and returns undefined. */
  private seconds(
    req: IncomingMessage,
    res: ServerResponse,
    errors: RouteErrors,
    fallback: number,
  ): number | undefined {
    const raw = new URLSearchParams(queryOf(req.url)).get('seconds');
    if (raw === null || raw === '') return Math.min(fallback, this.options.maxSeconds);
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 1 && n <= this.options.maxSeconds) return n;
    sendError(
      req,
      res,
      errors,
      400,
      `seconds must be a whole number from 1 to ${this.options.maxSeconds}`,
    );
    return undefined;
  }
}

function acquire(
  req: IncomingMessage,
  res: ServerResponse,
  errors: RouteErrors,
  what: string,
): boolean {
  if (running !== undefined) {
    sendError(req, res, errors, 409, `${running} is running; try again when it has finished`);
    return false;
  }
  running = what;
  return true;
}

function release(): void {
  running = undefined;
}

/** Resolves after `ms`, or at once when the client goes away. */
function waitOrGone(res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

async function cpuProfile(
  req: IncomingMessage,
  res: ServerResponse,
  errors: RouteErrors,
  seconds: number,
): Promise<void> {
  // node:inspector on first use: loading it costs a start ~1.2 ms.
  const { Session } = process.getBuiltinModule('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, (err, result) => (err ? reject(err) : resolve(result))),
    );
  try {
    await post('Profiler.enable');
    await post('Profiler.start');
    await waitOrGone(res, seconds * 1000);
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    if (res.destroyed) return;
    const body = JSON.stringify(profile);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Disposition', `attachment; filename="${fileName('cpu', 'cpuprofile')}"`);
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  } catch (err) {
    if (!res.headersSent)
      sendError(req, res, errors, 500, `CPU profile failed: ${(err as Error).message}`);
  } finally {
    session.disconnect();
  }
}

async function heapSnapshot(res: ServerResponse): Promise<void> {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="${fileName('heap', 'heapsnapshot')}"`,
  );
  try {
    await pipeline(v8.getHeapSnapshot(), res);
  } catch {
    // The client went away: the snapshot stream is closed by pipeline.
  }
}

async function eventLoop(
  req: IncomingMessage,
  res: ServerResponse,
  seconds: number,
): Promise<void> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const elu = performance.eventLoopUtilization();
  histogram.enable();
  await waitOrGone(res, seconds * 1000);
  histogram.disable();
  if (res.destroyed) return;
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  sendJson(req, res, 200, {
    seconds,
    delayMs: {
      min: ms(histogram.min),
      mean: ms(histogram.mean),
      stddev: ms(histogram.stddev),
      p50: ms(histogram.percentile(50)),
      p90: ms(histogram.percentile(90)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
    },
    samples: histogram.count,
    utilization: Math.round(performance.eventLoopUtilization(elu).utilization * 1e4) / 1e4,
  });
}

/** The resources keeping the event loop alive, counted by type (TCPSocketWrap, Timeout, FSReqCallback, …). */
function handles(): Record<string, unknown> {
  const byType: Record<string, number> = {};
  const all = process.getActiveResourcesInfo();
  for (const type of all) byType[type] = (byType[type] ?? 0) + 1;
  return { total: all.length, byType };
}

function fileName(kind: string, ext: string): string {
  return `${kind}-${process.pid}-${new Date().toISOString().replace(/[:.]/g, '-')}.${ext}`;
}
