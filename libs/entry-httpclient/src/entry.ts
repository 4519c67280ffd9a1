import {
  CallContext,
  type CallInfo,
  type Entry,
  type EntryContext,
  type InboundCall,
} from '@svcboot/entry-core';
import type { MiddlewarePlacement } from '@svcboot/entry-core';
import {
  AdaptiveBreaker,
  addBreakerMetricsTo,
  basicCallPayloads,
  breakerStep,
  buildCallChain,
  clientCredentials,
  endCall,
  GRPC_CODE_NAMES,
  googleStatusName,
  grpcStatusOfHttp,
  httpStatusOf,
  markUpstreamFailure,
  outboundDeadline,
  propagateHeaders,
  startCall,
  type CallChain,
  type PropagationOptions,
  type UpstreamFailure,
} from '@svcboot/entry-core/call';
import { register, type Registry } from 'prom-client';
import { AddressBalancer } from './address-balancer.js';
import { parseBaseUrl, type BaseUrl } from './base-url.js';
import { HttpClientSpanMiddleware } from './client-span.js';
import { HttpClientCallError, httpClientErrors } from './errors.js';
import { RequestHeaders } from './headers.js';
import { BREAKER_KIND, HttpClientMetrics } from './metrics.js';
import { hostResolver } from './resolve-host.js';
import { backoffMs, isIdempotent, RetryBudget } from './retry.js';
import type { HttpClientConfig } from './schema.js';

/** The client span: open before the record begins, so that the record carries its ids. */
const CLIENT_SPAN_PLACE: MiddlewarePlacement = {
  phase: 'observe',
  after: 'prom',
  before: 'logging',
};

export const HTTP_CLIENT_ENTRY_TYPE = 'HttpClientEntry';

/** fetch's options plus what svcboot adds to an outbound call. */
export interface HttpClientInit extends Omit<RequestInit, 'method'> {
  /** `GET` unless given. */
  method?: string;
  /**
   * The inbound call this one is made for (an httpserver handler's `ctx.state.call`, a typed gRPC
   * handler's context, `callContextOf(call)`): its deadline, request id and listed headers go on.
   */
  call?: InboundCall | undefined;
  /** The route template (`/v1/invoices/:id`): the metrics' `route` label and the span's name. */
  route?: string;
  /** Retry this call although its method is not idempotent (it is safe to repeat). */
  retry?: boolean;
  /** This call's own timeout in ms (the soonest deadline wins). */
  timeoutMs?: number;
}

/** Request bodies that can be sent again (a stream cannot). */
function replayable(body: RequestInit['body']): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer ||
    body instanceof URLSearchParams ||
    body instanceof Blob ||
    body instanceof FormData
  );
}

/** Why a fetch failed without a response, in a few words: `ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:1)`. */
function whyFailed(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * An `httpclient` entry: outbound HTTP calls to `baseUrl` on Node's fetch (undici, its connection
 * pool), each through entry-core's call driver with the client's middleware chain, carrying the
 * inbound call's deadline, request id, trace and listed headers, retried (idempotent methods) and
 * guarded by the breaker as configured.
 */
export class HttpClientEntry implements Entry {
  readonly type = HTTP_CLIENT_ENTRY_TYPE;
  readonly name: string;
  readonly description: string;
  readonly base: BaseUrl;
  private readonly breaker: AdaptiveBreaker | undefined;
  private readonly budget: RetryBudget;
  private readonly propagation: PropagationOptions;
  private builtChain: CallChain | undefined;
  private registry: Registry = register;
  private closed = false;
  /** With `loadBalancing: round_robin`: the dispatcher that spreads calls over the host's addresses. */
  private readonly balancer: AddressBalancer | undefined;

  constructor(
    readonly config: HttpClientConfig,
    private readonly ctx: EntryContext,
  ) {
    this.name = config.name;
    this.description = config.description;
    const base = parseBaseUrl(config.baseUrl);
    // The schema checked it; a second look keeps the types honest.
    if (typeof base === 'string') throw httpClientErrors.badUrl(ctx.configPath, base);
    this.base = base;
    const b = config.breaker;
    this.breaker = b.enabled
      ? new AdaptiveBreaker({
          k: b.k,
          windowMs: b.windowMs,
          buckets: b.buckets,
          minRequests: b.minRequests,
        })
      : undefined;
    this.balancer =
      config.loadBalancing === 'round_robin'
        ? new AddressBalancer(
            base,
            hostResolver(config.dnsServer),
            config.resolveIntervalMs,
            (err) =>
              ctx.logger.warn(
                `${ctx.configPath}: resolving ${base.host} failed (${err instanceof Error ? err.message : String(err)}); calls keep the addresses known`,
              ),
          )
        : undefined;
    this.budget = new RetryBudget(config.retry.budget.maxTokens, config.retry.budget.tokenRatio);
    const credentials = clientCredentials(config.auth, config.propagate.metadata);
    this.propagation = {
      timeoutMs: config.timeoutMs,
      deadlineMarginMs: config.deadlineMarginMs,
      metadata: credentials.metadata,
      fixed: [...credentials.fixed, ...Object.entries(config.headers)],
    };
  }

  /** The breaker's state now, `disabled` without one. */
  get breakerState(): 'closed' | 'open' | 'disabled' {
    return this.breaker?.state ?? 'disabled';
  }

  /** The outbound calls' chain (entry-core's, as a server's), built at the first call. */
  private get chain(): CallChain {
    this.builtChain ??= buildCallChain(this.config.middleware, this.ctx, {
      entryName: this.name,
      entryType: HTTP_CLIENT_ENTRY_TYPE,
      registry: this.registry,
      transport: {
        payloads: basicCallPayloads,
        metrics: (registry) => new HttpClientMetrics(registry, this.name),
      },
      added: [
        { place: CLIENT_SPAN_PLACE, middleware: new HttpClientSpanMiddleware(this.base) },
        ...(this.breaker === undefined
          ? []
          : [breakerStep(BREAKER_KIND, this.name, this.config.baseUrl, this.breaker)]),
      ],
    });
    return this.builtChain;
  }

  /**
   * Calls `baseUrl` + `path` (which may carry a query) with fetch's options: the Response whatever
   * its status (read it as with fetch). Rejects with an HttpClientCallError (`status` 503) when no
   * response came (unreachable, refused by the breaker) and (504) when the deadline passed first.
   */
  fetch(path: string, init: HttpClientInit = {}): Promise<Response> {
    if (this.closed) return Promise.reject(httpClientErrors.closed(this.name));
    const { call: inbound, route, retry, timeoutMs, method: m, ...rest } = init;
    const method = (m ?? 'GET').toUpperCase();
    const q = path.indexOf('?');
    const apiPath = this.base.prefix + (q < 0 ? path : path.slice(0, q));
    const headers = new RequestHeaders(new Headers(rest.headers));
    propagateHeaders(headers, inbound, this.propagation);
    const given = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    const deadline = outboundDeadline(given, inbound, this.propagation);
    const deadlineHeader = this.config.deadlineHeader;
    if (deadline !== Infinity && deadlineHeader !== '' && headers.get(deadlineHeader) === undefined)
      headers.set(
        deadlineHeader,
        `${Math.min(99_999_999, Math.max(1, Math.ceil(deadline - Date.now())))}m`,
      );
    const info: CallInfo = {
      operation: `${method} ${apiPath}`,
      remoteAddr: this.config.baseUrl,
      apiMethod: method,
      apiPath,
      apiProtocol: 'HTTP/1.1',
      apiQuery: q < 0 ? '' : path.slice(q + 1),
      userAgent: '',
      restPath: route ?? '',
    };
    const call = new CallContext(info, headers);
    call.deadline = deadline;
    const retryable =
      (retry ?? isIdempotent(method)) && this.config.retry.maxAttempts > 1 && replayable(rest.body);
    const url = `${this.base.origin}${this.base.prefix}${path}`;
    return new Promise<Response>((resolve, reject) => {
      startCall(this.chain, call, {
        proceed: (c) => {
          c.runInScope((attempt: RequestInit) => this.send(url, attempt, c, retryable), this, {
            ...rest,
            method,
            headers: headers.headers,
          }).then(
            (res) => {
              endCall(c, String(res.status));
              resolve(res);
            },
            (err: unknown) => {
              c.error = err;
              if (err instanceof HttpClientCallError) {
                endCall(c, String(err.status));
                reject(markUpstreamFailure(err, this.failureOf(err.status)));
              } else {
                endCall(c, '499');
                reject(err);
              }
            },
          );
        },
        refuse: (c, rejection) => {
          const status = httpStatusOf(rejection.status);
          endCall(c, String(status));
          reject(
            markUpstreamFailure(
              new HttpClientCallError('SVC_HTTPCLIENT_UNAVAILABLE', rejection.message, status, {
                cause: rejection,
              }),
              this.failureOf(status),
            ),
          );
        },
      });
    });
  }

  /** What an inbound caller may see of a call that failed with `status` (503, 504), made once. */
  private readonly failures = new Map<number, UpstreamFailure>();
  private failureOf(status: number): UpstreamFailure {
    let failure = this.failures.get(status);
    if (failure === undefined) {
      failure = {
        client: this.name,
        // Google's canonical code for the status (503 UNAVAILABLE, 504 DEADLINE_EXCEEDED).
        grpcCode: Math.max(
          0,
          GRPC_CODE_NAMES.findIndex((n) => googleStatusName(n) === grpcStatusOfHttp(status)),
        ),
        httpStatus: status,
        message: `upstream "${this.name}" failed: ${status}`,
        passThrough: this.config.errors.passThrough,
      };
      this.failures.set(status, failure);
    }
    return failure;
  }

  /** The attempts of one call: retried as `retry:` says while the budget and the deadline allow. */
  private async send(
    url: string,
    init: RequestInit,
    call: CallContext,
    retryable: boolean,
  ): Promise<Response> {
    const policy = this.config.retry;
    const maxAttempts = retryable ? policy.maxAttempts : 1;
    const deadline = call.deadline;
    const what = call.info.operation;
    const caller = init.signal ?? undefined;
    const request = this.balancer === undefined ? init : await this.balanced(init, what);
    for (let attempt = 1; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw httpClientErrors.deadline(this.name, this.config.baseUrl, what, this.timeoutOf(call));
      const timeout = remaining === Infinity ? undefined : AbortSignal.timeout(remaining);
      const signal =
        timeout === undefined ? caller : caller ? AbortSignal.any([caller, timeout]) : timeout;
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await fetch(url, signal === undefined ? request : { ...request, signal });
      } catch (err) {
        if (timeout?.aborted)
          throw httpClientErrors.deadline(
            this.name,
            this.config.baseUrl,
            what,
            this.timeoutOf(call),
          );
        if (caller?.aborted) throw err;
        failure = err;
      }
      if (res !== undefined && !policy.retryableStatuses.includes(res.status)) {
        this.budget.onSuccess();
        return res;
      }
      this.budget.onFailure();
      const wait = backoffMs(policy, attempt);
      const last = attempt >= maxAttempts || !this.budget.allows || Date.now() + wait >= deadline;
      if (last) {
        if (res !== undefined) return res;
        throw httpClientErrors.unavailable(
          this.name,
          this.config.baseUrl,
          what,
          whyFailed(failure),
          failure,
        );
      }
      await res?.body?.cancel();
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /**
   * `init` with the balancer as fetch's dispatcher, once the host was resolved (the first call
   * waits for it; a failure is SVC_HTTPCLIENT_UNAVAILABLE and the next call tries again).
   */
  private async balanced(init: RequestInit, what: string): Promise<RequestInit> {
    const balancer = this.balancer as AddressBalancer;
    if (!balancer.resolved)
      try {
        await balancer.ready();
      } catch (err) {
        throw httpClientErrors.unavailable(
          this.name,
          this.config.baseUrl,
          what,
          `cannot resolve ${this.base.host}: ${whyFailed(err)}`,
          err,
        );
      }
    // undici's Dispatcher and the one Node's fetch types name are the same API, typed twice.
    return { ...init, dispatcher: balancer as unknown as RequestInit['dispatcher'] };
  }

  /** The call's whole time, for the deadline error's message. */
  private timeoutOf(call: CallContext): number {
    return Math.max(0, Math.round(call.deadline - call.receivedMs));
  }

  async bootstrap(): Promise<void> {
    if (this.config.metricsEntry === '') return;
    const server = this.ctx.entry(this.config.metricsEntry) as Partial<{ registry: Registry }>;
    if (typeof server.registry?.registerMetric !== 'function')
      throw httpClientErrors.noRegistry(this.ctx.configPath, this.config.metricsEntry);
    addBreakerMetricsTo(BREAKER_KIND, server.registry);
    // Before the first call builds the chain: its families go to the server's /metrics.
    if (this.builtChain === undefined) this.registry = server.registry;
  }

  async interrupt(): Promise<void> {
    this.closed = true;
    await this.balancer?.close();
  }

  /** With `loadBalancing: round_robin`, the addresses calls go to now; else []. */
  get addresses(): string[] {
    return this.balancer?.addresses ?? [];
  }

  bootstrapPayloads(): Record<string, unknown> {
    return { baseUrl: this.config.baseUrl, timeoutMs: this.config.timeoutMs };
  }
}
