import http from 'node:http';

/** What {@link driveOverload} saw. */
export interface OverloadResult {
  /** Requests sent (open loop: at the rate asked, whatever the answers). */
  sent: number;
  /** Answered with 200. */
  served: number;
  /** Answered with 503: shed. */
  shed: number;
  /** Shed answers whose Retry-After was not the one expected. */
  shedWithoutRetryAfter: number;
  /** Other outcomes (another status, a reset), by kind. */
  other: Record<string, number>;
  /** The status of every health probe, in order. */
  probeStatuses: Array<number | string>;
  /** Each health probe's latency (ms), in order. */
  probeLatenciesMs: number[];
  /** Each request's latency (ms), in the order answered. */
  latenciesMs: number[];
  /** From the last request sent to the last answer (ms): what was queued rather than shed. */
  tailMs: number;
}

/** The q-quantile (0–1) of `values` (nearest rank); NaN when there is none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * Drives an HTTP route at `ratePerS` requests a second for `durationMs` as an open loop (each
 * request is sent on time whether or not the earlier ones were answered) over `connections`
 * keep-alive connections opened first, as a load balancer or a client's pool keeps them (a busy
 * Node process accepts new connections slowly, and calls waiting in the kernel's accept queue are
 * beyond any shedder's sight), while a health probe asks `probePath` one request after another on
 * its own connection, every `probeEveryMs`. Resolves once every request was answered.
 */
export async function driveOverload(options: {
  port: number;
  path: string;
  ratePerS: number;
  durationMs: number;
  probePath: string;
  probeEveryMs?: number;
  retryAfter?: string;
  connections?: number;
}): Promise<OverloadResult> {
  const { port } = options;
  const retryAfter = options.retryAfter ?? '1';
  const result: OverloadResult = {
    sent: 0,
    served: 0,
    shed: 0,
    shedWithoutRetryAfter: 0,
    other: {},
    probeStatuses: [],
    probeLatenciesMs: [],
    latenciesMs: [],
    tailMs: 0,
  };
  const connections = options.connections ?? 64;
  const loadAgent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (
    path: string,
    agent: http.Agent,
  ): Promise<{ status?: number; retryAfter?: string; error?: string }> =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            retryAfter: String(res.headers['retry-after'] ?? ''),
          }),
        );
        res.on('error', (err: NodeJS.ErrnoException) =>
          resolve({ error: err.code ?? err.message }),
        );
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });

  const pending: Array<Promise<void>> = [];
  const send = (): void => {
    result.sent++;
    const t0 = performance.now();
    pending.push(
      get(options.path, loadAgent).then((o) => {
        result.latenciesMs.push(performance.now() - t0);
        if (o.status === 200) result.served++;
        else if (o.status === 503) {
          result.shed++;
          if (o.retryAfter !== retryAfter) result.shedWithoutRetryAfter++;
        } else {
          const kind = o.error ?? `status ${o.status}`;
          result.other[kind] = (result.other[kind] ?? 0) + 1;
        }
      }),
    );
  };
  // The pool, open before the load starts.
  await Promise.all(Array.from({ length: connections }, () => get(options.probePath, loadAgent)));
  const started = performance.now();
  const total = Math.round((options.ratePerS * options.durationMs) / 1000);
  let stopProbe = false;
  const probe = (async () => {
    while (!stopProbe) {
      const t0 = performance.now();
      const o = await get(options.probePath, probeAgent);
      result.probeLatenciesMs.push(performance.now() - t0);
      result.probeStatuses.push(o.status ?? o.error ?? 'none');
      await new Promise((r) => setTimeout(r, options.probeEveryMs ?? 50));
    }
  })();
  try {
    // On schedule: each tick sends what is due by then, so a late timer does not lower the rate.
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const due = Math.min(
          total,
          Math.floor(((performance.now() - started) * options.ratePerS) / 1000),
        );
        while (result.sent < due) send();
        if (result.sent >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    const lastSent = performance.now();
    await Promise.all(pending);
    result.tailMs = performance.now() - lastSent;
  } finally {
    stopProbe = true;
    await probe;
    loadAgent.destroy();
    probeAgent.destroy();
  }
  return result;
}

/** One call of {@link driveBurst}, as the client saw it. */
export interface BurstCall {
  /** The HTTP status, or the error's code when the call got no answer. */
  status: number | string;
  /** The answer's Retry-After header ('' without one). */
  retryAfter: string;
  /** A header of the answer the caller asked for (`markHeader`), '' without one. */
  mark: string;
  /** From sending to the answer's end (ms). */
  latencyMs: number;
}

/** What {@link driveBurst} saw. */
export interface BurstResult {
  calls: BurstCall[];
  /** Each probe's path, status and latency (ms), in order. */
  probes: Array<{ path: string; status: number | string; latencyMs: number }>;
}

/**
 * Sends `count` GET `path` requests at once, one on each of `count` keep-alive connections opened
 * first (as a load balancer's pool or a burst of clients keeps them), while a probe asks each of
 * `probePaths` in turn on its own connection, one request after another with `probeEveryMs`
 * between them, as Kubernetes' probes would. Resolves once every call was answered (each with a
 * client-side limit of `callTimeoutMs`, an error `timeout` past it) and the probe stopped.
 */
export async function driveBurst(options: {
  port: number;
  path: string;
  count: number;
  probePaths: readonly string[];
  probeEveryMs?: number;
  headers?: Record<string, string>;
  markHeader?: string;
  callTimeoutMs?: number;
}): Promise<BurstResult> {
  const { port, count } = options;
  const agent = new http.Agent({ keepAlive: true, maxSockets: count, maxFreeSockets: count });
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (
    path: string,
    a: http.Agent,
    headers: Record<string, string> = {},
    timeoutMs = 30_000,
  ): Promise<BurstCall> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const done = (status: number | string, retryAfter = '', mark = ''): void =>
        resolve({ status, retryAfter, mark, latencyMs: performance.now() - t0 });
      const req = http.get({ host: '127.0.0.1', port, path, agent: a, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          done(
            res.statusCode ?? 'none',
            String(res.headers['retry-after'] ?? ''),
            options.markHeader ? String(res.headers[options.markHeader] ?? '') : '',
          ),
        );
        res.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
      });
      req.setTimeout(timeoutMs, () =>
        req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
      );
      req.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    });
  const result: BurstResult = { calls: [], probes: [] };
  try {
    // The pool, open (and each connection used once) before the burst.
    await Promise.all(Array.from({ length: count }, () => get(options.probePaths[0]!, agent)));
    await get(options.probePaths[0]!, probeAgent);
    let stop = false;
    const probe = (async () => {
      for (let i = 0; !stop; i++) {
        const path = options.probePaths[i % options.probePaths.length]!;
        const r = await get(path, probeAgent);
        result.probes.push({ path, status: r.status, latencyMs: r.latencyMs });
        await new Promise((r) => setTimeout(r, options.probeEveryMs ?? 20));
      }
    })();
    result.calls = await Promise.all(
      Array.from({ length: count }, () =>
        get(options.path, agent, options.headers, options.callTimeoutMs),
      ),
    );
    stop = true;
    await probe;
  } finally {
    agent.destroy();
    probeAgent.destroy();
  }
  return result;
}
