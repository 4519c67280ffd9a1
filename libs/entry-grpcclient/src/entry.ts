import type { DescService } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  Channel,
  Client,
  connectivityState,
  credentials,
  status,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientOptions,
} from '@grpc/grpc-js';
import type {
  Entry,
  EntryContext,
  EntryHealth,
  InboundCall,
  LifecycleContext,
} from '@svcboot/entry-core';
import type { MiddlewarePlacement } from '@svcboot/entry-core';
import {
  AdaptiveBreaker,
  addBreakerMetricsTo,
  breakerStep,
  buildCallChain,
  clientCredentials,
  httpStatusOfGrpcCode,
  type CallChain,
  type UpstreamFailure,
} from '@svcboot/entry-core/call';
import { grpcCallPayloads, typedClient, type TypedClient } from '@svcboot/grpc-typed';
import { register, type Registry } from 'prom-client';
import { ClientSpanMiddleware } from './client-span.js';
import { retryIdempotent } from './idempotent-retry.js';
import { grpcClientErrors } from './errors.js';
import { outboundInterceptor, type OutboundOptions } from './interceptor.js';
import { BREAKER_KIND, GrpcClientMetrics } from './metrics.js';
import type { GrpcClientConfig } from './schema.js';
import { serviceConfigOf } from './service-config.js';
import {
  PERIODIC_DNS_SCHEME,
  registerPeriodicDns,
  RESOLVE_INTERVAL_OPTION,
} from './periodic-resolver.js';
import { parseTarget, type ChannelTarget } from './target.js';

/** The client span: open before the record begins, so that the record carries its ids. */
const CLIENT_SPAN_PLACE: MiddlewarePlacement = {
  phase: 'observe',
  after: 'prom',
  before: 'logging',
};

export const GRPC_CLIENT_ENTRY_TYPE = 'GrpcClientEntry';

/**
 * The entry's one channel, which every client made on it shares: a client's `close()` (grpc-js
 * closes the channel it was given) leaves it open; the entry closes it at interrupt.
 */
class SharedChannel extends Channel {
  override close(): void {}
  closeShared(): void {
    super.close();
  }
}

/** A grpc-js generated client class (`makeGenericClientConstructor`, grpc-tools, proto-loader). */
export type PlainClientClass<C> = new (
  address: string,
  credentials: ChannelCredentials,
  options?: ClientOptions,
) => C;

/**
 * A `grpcclient` entry: one grpc-js channel to `target` (balanced, retried as configured) that
 * typed and plain clients share. Each client made with an inbound call carries its deadline,
 * request id, trace context and listed metadata.
 */
export class GrpcClientEntry implements Entry {
  readonly type = GRPC_CLIENT_ENTRY_TYPE;
  readonly name: string;
  readonly description: string;
  readonly readinessCheck: boolean;
  /**
   * The target as grpc-js takes it (`dns:///…`; `svcboot-dns:///…` when `resolveIntervalMs` re-resolves
   * it on a timer; `ipv4:…`, `unix:…`).
   */
  readonly target: string;
  private readonly parsed: ChannelTarget;
  private readonly credentials: ChannelCredentials;
  private readonly channelOptions: ChannelOptions;
  private readonly outbound: OutboundOptions;
  private channelMade: SharedChannel | undefined;
  private closed = false;
  private readonly breaker: AdaptiveBreaker | undefined;
  private builtChain: CallChain | undefined;
  /** Where the chain's metric families go: the `metricsEntry`'s registry, else prom-client's default. */
  private registry: Registry = register;

  constructor(
    readonly config: GrpcClientConfig,
    private readonly ctx: EntryContext,
  ) {
    this.name = config.name;
    this.description = config.description;
    this.readinessCheck = config.readinessCheck;
    const parsed = parseTarget(config.target);
    // The schema checked it; a second look keeps the types honest.
    if (typeof parsed === 'string') throw grpcClientErrors.badTarget(ctx.configPath, parsed);
    this.parsed = parsed;
    if (parsed.dnsServer && process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER !== 'true')
      ctx.logger.warn(
        `${ctx.configPath}.target names the DNS server ${parsed.dnsServer}, which grpc-js asks only when the process runs with GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true (set before @grpc/grpc-js is loaded); without it the system's resolver answers`,
      );
    const periodic = parsed.grpcTarget.startsWith('dns:') && config.resolveIntervalMs > 0;
    if (periodic) registerPeriodicDns();
    // A dns: target resolved again on the entry's interval: the same resolver under its scheme.
    this.target = periodic
      ? `${PERIODIC_DNS_SCHEME}:${parsed.grpcTarget.slice('dns:'.length)}`
      : parsed.grpcTarget;
    this.credentials = this.makeCredentials();
    this.channelOptions = {
      'grpc.service_config': serviceConfigOf(config),
      'grpc.service_config_disable_resolution': 1,
      'grpc.initial_reconnect_backoff_ms': config.reconnectBackoffMs.initial,
      'grpc.max_reconnect_backoff_ms': config.reconnectBackoffMs.max,
      'grpc.dns_min_time_between_resolutions_ms': config.dnsMinIntervalMs,
      [RESOLVE_INTERVAL_OPTION]: config.resolveIntervalMs,
      ...(config.tls.serverName ? { 'grpc.ssl_target_name_override': config.tls.serverName } : {}),
    };
    const b = config.breaker;
    this.breaker = b.enabled
      ? new AdaptiveBreaker({
          k: b.k,
          windowMs: b.windowMs,
          buckets: b.buckets,
          minRequests: b.minRequests,
        })
      : undefined;
    const credentials = clientCredentials(config.auth, config.propagate.metadata);
    this.outbound = {
      target: config.target,
      timeoutMs: config.timeoutMs,
      deadlineMarginMs: config.deadlineMarginMs,
      metadata: credentials.metadata,
      fixed: credentials.fixed,
      chain: () => this.chain,
      failure: (code) => this.failureOf(code),
    };
  }

  /** What an inbound caller may see of a call that failed with `code`, made once per code. */
  private readonly failures = new Map<number, UpstreamFailure>();
  private failureOf(code: number): UpstreamFailure {
    let failure = this.failures.get(code);
    if (failure === undefined) {
      failure = {
        client: this.name,
        grpcCode: code,
        httpStatus: httpStatusOfGrpcCode(code),
        message: `upstream "${this.name}" failed: ${status[code] ?? `code ${code}`}`,
        passThrough: this.config.errors.passThrough,
      };
      if (code >= 0 && code <= 16) this.failures.set(code, failure);
    }
    return failure;
  }

  /**
   * The outbound calls' middleware chain (entry-core's, as a server's), built on first use: the
   * configured middlewares, the client span and the breaker.
   */
  private get chain(): CallChain {
    this.builtChain ??= buildCallChain(this.config.middleware, this.ctx, {
      entryName: this.name,
      entryType: GRPC_CLIENT_ENTRY_TYPE,
      registry: this.registry,
      transport: {
        payloads: grpcCallPayloads,
        metrics: (registry) => new GrpcClientMetrics(registry, this.name),
      },
      added: [
        { place: CLIENT_SPAN_PLACE, middleware: new ClientSpanMiddleware(this.config.target) },
        ...(this.breaker === undefined
          ? []
          : [breakerStep(BREAKER_KIND, this.name, this.config.target, this.breaker)]),
      ],
    });
    return this.builtChain;
  }

  private makeCredentials(): ChannelCredentials {
    const tls = this.config.tls;
    if (!tls.enabled) return credentials.createInsecure();
    if (tls.certEntry === '') return credentials.createSsl();
    const bundle = this.ctx.cert(tls.certEntry);
    return credentials.createSsl(bundle.ca ?? null, bundle.key ?? null, bundle.cert ?? null);
  }

  /** The shared channel, made on first use (or at bootstrap with `eager`). */
  get channel(): Channel {
    if (this.closed) throw grpcClientErrors.closed(this.name);
    this.channelMade ??= new SharedChannel(this.target, this.credentials, this.channelOptions);
    return this.channelMade;
  }

  /** The breaker's state now, `disabled` without one. */
  get breakerState(): 'closed' | 'open' | 'disabled' {
    return this.breaker?.state ?? 'disabled';
  }

  /**
   * grpc-js client options on the shared channel with this entry's interceptor: for a plain
   * generated client, `new GreeterClient(entry.target, entry.channelCredentials, entry.clientOptions(call))`.
   */
  clientOptions(call?: InboundCall): ClientOptions {
    return {
      channelOverride: this.channel,
      interceptors: [outboundInterceptor(this.outbound, call)],
    };
  }

  /** The channel's credentials (plaintext or TLS as configured). */
  get channelCredentials(): ChannelCredentials {
    return this.credentials;
  }

  /**
   * A typed client of `service` (protoc-gen-es output) on this entry's channel. Pass the inbound
   * call (a typed handler's context or `callContextOf(call)`) to carry its deadline, request id and
   * metadata; the active OpenTelemetry span goes as `traceparent` either way.
   */
  client<S extends GenService<GenServiceMethods>>(service: S, call?: InboundCall): TypedClient<S> {
    const typed = typedClient(
      service,
      new Client(this.target, this.credentials, this.clientOptions(call)),
    );
    return retryIdempotent(service as unknown as DescService, typed, this.config.retry);
  }

  /** A plain grpc-js client of a generated class, on this entry's channel. */
  plain<C>(clientClass: PlainClientClass<C>, call?: InboundCall): C {
    return new clientClass(this.target, this.credentials, this.clientOptions(call));
  }

  async bootstrap(ctx: LifecycleContext): Promise<void> {
    if (this.config.metricsEntry !== '') {
      const server = this.ctx.entry(this.config.metricsEntry) as Partial<{ registry: Registry }>;
      if (typeof server.registry?.registerMetric !== 'function')
        throw grpcClientErrors.noRegistry(this.ctx.configPath, this.config.metricsEntry);
      addBreakerMetricsTo(BREAKER_KIND, server.registry);
      // Before the first call builds the chain: its families go to the server's /metrics.
      if (this.builtChain === undefined) this.registry = server.registry;
    }
    if (!this.config.eager) return;
    const channel = this.channel;
    const deadline = Date.now() + Math.min(this.config.connectTimeoutMs, ctx.timeoutMs);
    for (;;) {
      const state = channel.getConnectivityState(true);
      if (state === connectivityState.READY) return;
      if (Date.now() >= deadline)
        throw grpcClientErrors.notConnected(
          this.ctx.configPath,
          this.config.target,
          connectivityState[state],
        );
      await new Promise<void>((resolve) =>
        channel.watchConnectivityState(state, deadline, () => resolve()),
      );
    }
  }

  async interrupt(): Promise<void> {
    this.closed = true;
    this.channelMade?.closeShared();
    this.channelMade = undefined;
  }

  backendHealth(): EntryHealth {
    const ch = this.channelMade;
    if (ch === undefined) return { ok: true, detail: 'not connected yet (lazy)' };
    const state = ch.getConnectivityState(false);
    const ok = state === connectivityState.READY || state === connectivityState.IDLE;
    return { ok, detail: connectivityState[state].toLowerCase() };
  }

  bootstrapPayloads(): Record<string, unknown> {
    return {
      target: this.config.target,
      loadBalancing: this.config.loadBalancing,
      authority: this.parsed.display,
    };
  }
}
