import http from 'node:http';
import type { Child } from './process.js';
import { waitFor } from './wait.js';

/** One request of a {@link sigtermUnderKeepAliveLoad} worker. */
export interface KeepAliveOutcome {
  worker: number;
  /** Sent after the SIGTERM. */
  afterSignal: boolean;
  /**
   * Answered after the SIGTERM (unset when not answered): a request sent just before the signal
   * can be answered after it, with Connection: close when the server was slow to reach it (a
   * crowded machine), and is then its connection's last.
   */
  answeredAfterSignal?: boolean;
  /** Sent on a connection an earlier request of the worker had used (keep-alive reuse). */
  reused: boolean;
  status?: number;
  /** The response's Connection header. */
  connection?: string;
  /** A 503 with Retry-After: shed by the app's load shedding, an answer (not a lost request). */
  shed?: boolean;
  /** The client-side error when there was no response (`ECONNRESET`, `socket hang up`, …). */
  error?: string;
}

export interface SigtermLoadResult {
  outcomes: KeepAliveOutcome[];
  /** Requests that did not end in `expectStatus` (or a shed 503): what the test counts as lost. */
  failures: KeepAliveOutcome[];
  /** What the readiness probe saw that made the "load balancer" stop opening connections. */
  readiness: number | string;
  exitCode: number | null;
}

/**
 * SIGTERM to an svcboot app (a child process) under keep-alive load, as a Kubernetes Service
 * sees it: `connections` workers loop on `path`, each over its own keep-alive connection. After
 * the signal a readiness probe (`GET /readyz` on new connections) runs until it gets 503 or the
 * connection is refused: from then on the "load balancer" opens no new connection, but a worker
 * goes on sending on the keep-alive connection it has (clients do), until a response closes it.
 * Every request must still end in `expectStatus`: a reset, a hang-up or an error status is a
 * lost request. Workers are bounded (`maxRequests` each), and the child must exit.
 */
export async function sigtermUnderKeepAliveLoad(
  child: Child,
  options: {
    port: number;
    path: string;
    connections?: number;
    expectStatus?: number;
    warmRequests?: number;
    maxRequests?: number;
    /** Run once the load is done, before waiting for the child to exit (to finish calls held across the signal). */
    beforeExit?: () => Promise<void>;
  },
): Promise<SigtermLoadResult> {
  const { port, path } = options;
  const connections = options.connections ?? 8;
  const expectStatus = options.expectStatus ?? 200;
  const warm = options.warmRequests ?? 20;
  const maxRequests = options.maxRequests ?? 20_000;
  const outcomes: KeepAliveOutcome[] = [];
  let signalled = false;
  let lbRemoved = false;
  const answered = new Array<number>(connections).fill(0);

  const one = (agent: http.Agent, worker: number, reused: boolean): Promise<KeepAliveOutcome> =>
    new Promise((resolve) => {
      const outcome: KeepAliveOutcome = { worker, afterSignal: signalled, reused };
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          outcome.answeredAfterSignal = signalled;
          outcome.status = res.statusCode;
          outcome.connection = String(res.headers.connection ?? '');
          if (res.statusCode === 503 && res.headers['retry-after'] !== undefined)
            outcome.shed = true;
          resolve(outcome);
        });
        res.on('error', (err: NodeJS.ErrnoException) => {
          outcome.error = err.code ?? err.message;
          resolve(outcome);
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        outcome.error = err.code ?? err.message;
        resolve(outcome);
      });
    });

  const worker = async (w: number): Promise<void> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let open = false;
    try {
      for (let i = 0; i < maxRequests; i++) {
        // Behind a load balancer that has taken the app out, no new connection is opened.
        if (lbRemoved && !open) return;
        const o = await one(agent, w, open);
        outcomes.push(o);
        if (o.status !== undefined) answered[w]!++;
        open = o.status !== undefined && o.connection !== 'close';
        if (o.error !== undefined && signalled) return;
      }
    } finally {
      agent.destroy();
    }
  };
  const workers = Array.from({ length: connections }, (_, w) => worker(w));
  await waitFor(
    `each of ${connections} connections to get ${warm} answers`,
    () => answered.every((n) => n >= warm),
    { timeoutMs: 30_000 },
  );

  signalled = true;
  child.process.kill('SIGTERM');
  let readiness: number | string = 'none';
  await waitFor(
    'the readiness probe to see the app out (503 or refused)',
    () =>
      new Promise<boolean>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/readyz', agent: false }, (res) => {
          res.resume();
          readiness = res.statusCode ?? 0;
          resolve(res.statusCode === 503);
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          readiness = err.code ?? err.message;
          resolve(err.code === 'ECONNREFUSED');
        });
      }),
    { timeoutMs: 20_000, intervalMs: 10 },
  );
  lbRemoved = true;
  await Promise.all(workers);
  await options.beforeExit?.();
  const exitCode = await child.waitForExit(30_000);
  const failures = outcomes.filter((o) => o.status !== expectStatus && o.shed !== true);
  return { outcomes, failures, readiness, exitCode };
}
