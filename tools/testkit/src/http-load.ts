import http from 'node:http';

/** What became of one request of an {@link HttpLoad}. */
export interface LoadOutcome {
  /** The request's number (the `i` given to `body`). */
  index: number;
  /** The server answered `100 Continue` (it had read the headers and started the request)... */
  accepted: boolean;
  /** ...and it did so before {@link HttpLoad.markSignal} was called. */
  acceptedBeforeSignal: boolean;
  /** Sent (headers written) after {@link HttpLoad.markSignal}. */
  sentAfterSignal: boolean;
  status?: number;
  body?: string;
  /** The client-side error (`ECONNRESET`, `ECONNREFUSED`, `socket hang up`, ...), when there was no response. */
  error?: string;
}

export interface HttpLoadOptions {
  port: number;
  host?: string;
  /** POST by default. A GET is sent with `Content-Length: 0`, still with `Expect: 100-continue`. */
  method?: 'GET' | 'POST' | 'PUT';
  path: string;
  /** The body of request number `i` (none by default). */
  body?: (i: number) => string;
  headers?: Record<string, string>;
  /** Requests in flight at once, each worker on its own keep-alive connection. */
  concurrency: number;
  /** Upper bound on requests issued in all (the loop is bounded even if nothing stops it). */
  maxRequests: number;
}

/**
 * A bounded load generator over keep-alive HTTP/1.1 connections. Every request carries
 * `Expect: 100-continue` and sends its body only after the server's `100 Continue`, so each
 * outcome says whether the server had accepted the request, and whether before a signal the
 * test marks. A worker stops at `maxRequests`, at `stop()`, or after a failure once the signal
 * is marked (the server is going away).
 */
export class HttpLoad {
  readonly outcomes: LoadOutcome[] = [];
  private readonly agent: http.Agent;
  private issued = 0;
  private signalled = false;
  private stopped = false;
  private workers: Array<Promise<void>> = [];

  constructor(private readonly options: HttpLoadOptions) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  }

  start(): this {
    for (let w = 0; w < this.options.concurrency; w++) this.workers.push(this.worker());
    return this;
  }

  /** Requests answered so far (any status). */
  get answered(): number {
    return this.outcomes.filter((o) => o.status !== undefined).length;
  }

  /** From now on, a `100 Continue` no longer counts as accepted before the signal. */
  markSignal(): void {
    this.signalled = true;
  }

  /** Waits for every worker to stop (they stop by themselves after the signal); `stop` ends them early. */
  async finished(): Promise<LoadOutcome[]> {
    await Promise.all(this.workers);
    this.agent.destroy();
    return this.outcomes;
  }

  stop(): Promise<LoadOutcome[]> {
    this.stopped = true;
    return this.finished();
  }

  private async worker(): Promise<void> {
    while (!this.stopped && this.issued < this.options.maxRequests) {
      const outcome = await this.one(this.issued++);
      this.outcomes.push(outcome);
      if (outcome.error !== undefined && this.signalled) return;
    }
  }

  private one(i: number): Promise<LoadOutcome> {
    const { host = '127.0.0.1', port, method = 'POST', path } = this.options;
    const body = Buffer.from(this.options.body?.(i) ?? '');
    const outcome: LoadOutcome = {
      index: i,
      accepted: false,
      acceptedBeforeSignal: false,
      sentAfterSignal: this.signalled,
    };
    return new Promise((resolve) => {
      const req = http.request({
        host,
        port,
        method,
        path,
        agent: this.agent,
        headers: {
          ...this.options.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          expect: '100-continue',
        },
      });
      req.on('continue', () => {
        outcome.accepted = true;
        outcome.acceptedBeforeSignal = !this.signalled;
        req.end(body);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          outcome.status = res.statusCode;
          outcome.body = Buffer.concat(chunks).toString('utf8');
          resolve(outcome);
        });
        res.on('error', (err) => {
          outcome.error = errorCode(err);
          resolve(outcome);
        });
      });
      req.on('error', (err) => {
        outcome.error = errorCode(err);
        resolve(outcome);
      });
      // Headers now; the body waits for 100 Continue.
      req.flushHeaders();
    });
  }
}

function errorCode(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.message;
}

/** Connection-level failures a client may see for a request the server never accepted. */
const NOT_ACCEPTED = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'socket hang up']);

/**
 * What breaks "every accepted request completes" in a load run across a shutdown: an accepted
 * request (100 Continue) that did not end in success, any answer that is not a success (a 5xx
 * while draining, say), and a failure that is not a connection-level refusal of an unaccepted
 * request. Empty when the drain was clean.
 */
export function drainViolations(
  outcomes: readonly LoadOutcome[],
  isSuccess: (o: LoadOutcome) => boolean,
): string[] {
  const problems: string[] = [];
  for (const o of outcomes) {
    const what = `request ${o.index}${o.acceptedBeforeSignal ? ' (accepted before the signal)' : o.accepted ? ' (accepted after the signal)' : ''}`;
    if (o.status !== undefined && !isSuccess(o))
      problems.push(`${what}: answered ${o.status} ${JSON.stringify(o.body?.slice(0, 200))}`);
    else if (o.error !== undefined && o.accepted)
      problems.push(`${what}: accepted, then failed with ${o.error}`);
    else if (o.error !== undefined && !NOT_ACCEPTED.has(o.error))
      problems.push(`${what}: failed with ${o.error}, not a connection-level refusal`);
  }
  return problems;
}

/** A short summary for assertion messages: counts by status or error. */
export function summarizeOutcomes(outcomes: readonly LoadOutcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) {
    const k = o.status !== undefined ? `status ${o.status}` : `error ${o.error ?? '?'}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
