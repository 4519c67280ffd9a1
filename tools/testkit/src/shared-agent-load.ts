import http from 'node:http';
import type { Child } from './process.js';
import { waitFor } from './wait.js';

/** What the requests of {@link sigtermUnderSharedAgentLoad} ended in, by kind. */
export interface SharedAgentLoadResult {
  /** Answered with the expected status. */
  served: number;
  /** Answered, after the signal, with `Connection: close`. */
  closedAfterSignal: number;
  /**
   * No connection: ECONNREFUSED once the app stopped listening. Nothing was sent, so a client
   * retries it safely elsewhere: not a lost request.
   */
  refused: number;
  /**
   * Answered 503 with Retry-After: shed by the app's load shedding (a crowded machine can make the
   * app fall behind); an answer, not a lost request.
   */
  shed: number;
  /**
   * Sent and then lost: a reset, a hang-up, EPIPE, or an answer with another status. The
   * promise of a graceful shutdown is zero.
   */
  lost: Array<{ afterSignal: boolean; error?: string; reused?: boolean; status?: number }>;
  exitCode: number | null;
}

/**
 * SIGTERM to an svcboot app (a child process) under the load of one ordinary client: a single
 * Node `http.Agent({ keepAlive: true, maxSockets })` shared by `loops` concurrent loops of GET
 * `path` (more loops than sockets, so requests queue in the agent and every free socket is
 * reused at once, including one the server may be about to close). The loops go on through the
 * drain until the app refuses connections or exits: a request the app took and did not answer
 * is lost; a connection refused is not (nothing was sent).
 */
export async function sigtermUnderSharedAgentLoad(
  child: Child,
  options: {
    port: number;
    path: string;
    maxSockets?: number;
    loops?: number;
    expectStatus?: number;
    warmRequests?: number;
  },
): Promise<SharedAgentLoadResult> {
  const { port, path } = options;
  const maxSockets = options.maxSockets ?? 8;
  const loops = options.loops ?? maxSockets * 2;
  const expectStatus = options.expectStatus ?? 200;
  const warm = options.warmRequests ?? 200;
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const result: SharedAgentLoadResult = {
    served: 0,
    closedAfterSignal: 0,
    refused: 0,
    shed: 0,
    lost: [],
    exitCode: null,
  };
  let signalled = false;
  let exited = false;
  void child.exited.then(() => (exited = true));

  type Outcome = {
    status?: number;
    connection?: string;
    retryAfter?: boolean;
    error?: string;
    reused?: boolean;
  };
  const one = (): Promise<Outcome> =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            connection: String(res.headers.connection ?? ''),
            retryAfter: res.headers['retry-after'] !== undefined,
          }),
        );
        res.on('error', (err: NodeJS.ErrnoException) =>
          resolve({ error: err.code ?? err.message }),
        );
      });
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ error: err.code ?? err.message, reused: req.reusedSocket }),
      );
    });

  const loop = async (): Promise<void> => {
    while (!exited) {
      const afterSignal = signalled;
      const o = await one();
      if (o.error === 'ECONNREFUSED') {
        result.refused++;
        return;
      }
      if (o.status === expectStatus) {
        result.served++;
        if (afterSignal && o.connection === 'close') result.closedAfterSignal++;
      } else if (o.status === 503 && o.retryAfter) {
        result.shed++;
      } else {
        result.lost.push({
          afterSignal,
          ...(o.error !== undefined ? { error: o.error, reused: o.reused === true } : {}),
          ...(o.status !== undefined ? { status: o.status } : {}),
        });
        if (!signalled) return;
      }
    }
  };
  const running = Array.from({ length: loops }, () => loop());
  try {
    await waitFor(`${warm} answers before the signal`, () => result.served >= warm, {
      timeoutMs: 30_000,
    });
    signalled = true;
    child.process.kill('SIGTERM');
    await Promise.all(running);
    result.exitCode = await child.waitForExit(30_000);
  } finally {
    agent.destroy();
  }
  return result;
}
