import { z } from '../zod.js';
import { described } from '../described.js';
import { nonEmptyTextSchema, nonNegativeIntSchema, positiveIntSchema } from '../schema.js';

/**
 * `loadShedding` under a server entry (grpc, httpserver): refuse calls the process cannot serve
 * in time, quickly and cheaply, instead of queueing them until health probes time out
 * (ARCHITECTURE.md §5, "Load shedding"). On by default; a threshold of 0 turns its check off.
 */
export const loadSheddingSchema = z
  .strictObject({
    enabled: described(
      z.boolean().default(true),
      'Decide at admission whether each call runs now, waits its turn or is shed (gRPC RESOURCE_EXHAUSTED with grpc-retry-pushback-ms, HTTP 503 with Retry-After); health and metrics routes are never shed nor queued.',
    ),
    maxInFlight: described(
      nonNegativeIntSchema.default(5000),
      'Calls of this entry in flight at once (streams included, until they end) past which a new call is shed with reason in_flight; 0: no limit. Also the upper bound of the concurrency limit learned from latency.',
    ),
    maxEventLoopDelayMs: described(
      z.number().nonnegative().default(500),
      'The longest a call may wait to start: a call whose expected wait in the admission queue is longer is shed (reason queue_time), and while the current turn of the event loop has run this long (with at least 4 calls in it) calls are shed (reason event_loop_delay); critical calls at twice as much. 0: off. Half of it is also the lateness that, with maxEventLoopUtilization, marks the loop overloaded.',
    ),
    maxEventLoopUtilization: described(
      z.number().min(0).max(1).default(0.95),
      'The event-loop utilisation (perf_hooks, sampled every 100 ms) at or above which, while the loop also runs late (by half maxEventLoopDelayMs, two samples in a row), a share of the calls is shed (reason event_loop_utilization): it grows by 10% per sample while overloaded and shrinks by 5% per sample once not; 0: off.',
    ),
    retryAfterS: described(
      nonNegativeIntSchema.default(1),
      'The pushback of a shed call: Retry-After (seconds) on HTTP, grpc-retry-pushback-ms (the same, in ms) on gRPC (gRFC A6); both are sent as headers or trailers.',
    ),
    critical: described(
      z.array(nonEmptyTextSchema).default([]),
      'Calls shed last (operations, gRPC full methods, HTTP paths, prefixes ending in /, globs, as an ignore list): they wait in a queue of their own, drained first, and are shed only on their own queue, maxInFlight, or twice the loop lateness.',
    ),
    concurrency: described(
      z
        .strictObject({
          minLimit: described(
            positiveIntSchema.default(4),
            'The least the learned concurrency limit goes down to.',
          ),
          maxLimit: described(
            positiveIntSchema.default(5000),
            'Where the learned limit starts and the most it goes up to (and never above maxInFlight).',
          ),
        })
        .prefault({}),
      'The limit of unary calls running at once, learned from their latency (a gradient, as Netflix concurrency-limits Gradient2 and Envoy adaptive concurrency): it drops while calls slow down past 1.5 times their long-term latency and grows back while they do not; calls over it wait in the admission queue.',
    ),
  })
  .prefault({});

/** A server entry's `loadShedding` options, defaults filled in. */
export type LoadSheddingOptions = z.output<typeof loadSheddingSchema>;
