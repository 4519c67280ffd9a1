import { experimental, type ChannelOptions } from '@grpc/grpc-js';

/**
 * The scheme of `dns:` targets that are resolved again on a timer: grpc-js's own DNS resolver,
 * asked again every `resolveIntervalMs` while the channel is in use, besides when a connection
 * fails or closes (all grpc-js does by itself). A Kubernetes headless service's new pod thus gets
 * calls within an interval, with no connection having to close first.
 */
export const PERIODIC_DNS_SCHEME = 'svcboot-dns';

/** The channel option that carries the interval to the resolver (ms; 0: no timer). */
export const RESOLVE_INTERVAL_OPTION = 'svcboot.resolve_interval_ms';

type GrpcUri = experimental.GrpcUri;

function dnsUri(target: GrpcUri): GrpcUri {
  return { ...target, scheme: 'dns' };
}

/**
 * A resolver that wraps grpc-js's DNS resolver (made by grpc-js's registry for `dns:`, so the
 * c-ares variant when GRPC_NODE_USE_ALTERNATIVE_RESOLVER is set) and calls its
 * `updateResolution` every interval, from the channel's first resolution until the channel
 * destroys it (closed, or idle). The DNS resolver itself still keeps
 * `grpc.dns_min_time_between_resolutions_ms` between two lookups.
 */
class PeriodicDnsResolver implements experimental.Resolver {
  private readonly inner: experimental.Resolver;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(target: GrpcUri, listener: experimental.ResolverListener, options: ChannelOptions) {
    this.inner = experimental.createResolver(dnsUri(target), listener, options);
    const ms = Number(options[RESOLVE_INTERVAL_OPTION] ?? 0);
    this.intervalMs = Number.isFinite(ms) && ms > 0 ? ms : 0;
  }

  /** As grpc-js's DNS resolver: the target's `host:port`. */
  static getDefaultAuthority(target: GrpcUri): string {
    return target.path;
  }

  updateResolution(): void {
    this.inner.updateResolution();
    if (this.timer === undefined && this.intervalMs > 0) {
      this.timer = setInterval(() => this.inner.updateResolution(), this.intervalMs);
      this.timer.unref();
    }
  }

  destroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.inner.destroy();
  }
}

let registered = false;

/** Registers the scheme with grpc-js (once per process). */
export function registerPeriodicDns(): void {
  if (registered) return;
  experimental.registerResolver(PERIODIC_DNS_SCHEME, PeriodicDnsResolver);
  registered = true;
}
