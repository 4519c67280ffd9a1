import type { Cluster, Redis } from 'ioredis';

/** How often node latencies are measured again while `routeByLatency` is on. */
export const LATENCY_PROBE_INTERVAL_MS = 10_000;

/**
 * `routeByLatency`: pings every cluster node now and then and sends each read-only command to
 * the node of its slot (master or replica) with the lowest measured round trip. Nodes not yet
 * measured, or failing, are ranked last; with no measurement the master is used.
 */
export class LatencyRouter {
  private readonly latency = new WeakMap<Redis, number>();
  private timer: NodeJS.Timeout | undefined;

  /** The `scaleReads` function for the cluster options. */
  readonly pick = (nodes: Redis[]): Redis | undefined => {
    let best: Redis | undefined;
    let bestMs = Number.POSITIVE_INFINITY;
    for (const node of nodes) {
      const ms = this.latency.get(node) ?? Number.POSITIVE_INFINITY;
      if (ms < bestMs) {
        best = node;
        bestMs = ms;
      }
    }
    return best ?? nodes[0];
  };

  /** Measures once and keeps measuring every `intervalMs` until `stop`. */
  async start(cluster: Cluster, intervalMs = LATENCY_PROBE_INTERVAL_MS): Promise<void> {
    await this.measure(cluster);
    this.timer = setInterval(() => void this.measure(cluster), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The last round trip to `node` in milliseconds, if measured. */
  latencyOf(node: Redis): number | undefined {
    return this.latency.get(node);
  }

  async measure(cluster: Cluster): Promise<void> {
    await Promise.all(
      cluster.nodes('all').map(async (node) => {
        const start = process.hrtime.bigint();
        try {
          await node.ping();
          this.latency.set(node, Number(process.hrtime.bigint() - start) / 1e6);
        } catch {
          this.latency.set(node, Number.POSITIVE_INFINITY);
        }
      }),
    );
  }
}
