import { z } from 'zod';

/**
 * `loadShedding` under a server entry (grpc, httpserver): refuse calls the process cannot serve
 * in time, quickly and cheaply, instead of queueing them until health probes time out
 * (ARCHITECTURE.md §5, "Load shedding"). On by default; a threshold of 0 turns its check off.
 */
export const loadSheddingSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Shed calls (gRPC RESOURCE_EXHAUSTED, HTTP 503 with Retry-After) when the entry or the event loop is overloaded; health and metrics routes are never shed.',
      ),
    maxInFlight: z
      .number()
      .int()
      .nonnegative()
      .default(5000)
      .describe(
        'Calls of this entry in flight at once (streams included, until they end) past which a new call is shed with reason in_flight; 0: no limit.',
      ),
    maxEventLoopDelayMs: z
      .number()
      .nonnegative()
      .default(500)
      .describe(
        'Shed a call (reason event_loop_delay) while the event loop is this late (a timer due that long ago has not run yet because the current turn of the loop is still busy) and its last sample ran late by half as much; 0: off. Half of it is also the lateness that, with maxEventLoopUtilization, marks the loop overloaded.',
      ),
    maxEventLoopUtilization: z
      .number()
      .min(0)
      .max(1)
      .default(0.95)
      .describe(
        'The event-loop utilisation (perf_hooks, sampled every 100 ms) at or above which, while the loop also runs late (by half maxEventLoopDelayMs, two samples in a row), a share of the calls is shed (reason event_loop_utilization): it grows by 10% per sample while overloaded and shrinks by 5% per sample once not; 0: off.',
      ),
    retryAfterS: z
      .number()
      .int()
      .nonnegative()
      .default(1)
      .describe(
        'The Retry-After (seconds) of a shed HTTP call; gRPC calls get it as trailer metadata.',
      ),
  })
  .prefault({});

/** A server entry's `loadShedding` options, defaults filled in. */
export type LoadSheddingOptions = z.output<typeof loadSheddingSchema>;
