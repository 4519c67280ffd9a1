import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import {
  breakerSchema,
  clientAuthSchema,
  clientErrorsSchema,
  middlewareSchema,
  propagateSchema,
} from '@svcboot/entry-core/call';
import { msSchema } from '@svcboot/entry-core/toolkit';
import { z } from '@svcboot/entry-core/internal/zod';
import { parseBaseUrl } from './base-url.js';

const retrySchema = z
  .strictObject({
    /** Attempts including the first; 1 turns retries off. */
    maxAttempts: z.number().int().min(1).max(5).default(1),
    initialBackoffMs: z.number().int().positive().default(50),
    maxBackoffMs: z.number().int().positive().default(1000),
    backoffMultiplier: z.number().positive().default(2),
    /** Response statuses retried (besides a connection that failed before any response). */
    retryableStatuses: z.array(z.number().int().min(400).max(599)).default([502, 503, 504]),
    /** A retry budget (gRFC A6's retry throttling, per client): no retry storm on a failing backend. */
    budget: z
      .strictObject({
        maxTokens: z.number().positive().max(1000).default(10),
        tokenRatio: z.number().positive().default(0.1),
      })
      .prefault({}),
  })
  .refine((r) => r.initialBackoffMs <= r.maxBackoffMs, {
    message: 'initialBackoffMs is above maxBackoffMs',
    path: ['initialBackoffMs'],
  })
  .prefault({});

/** One `httpclient:` item. */
export const httpClientSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  /** `http(s)://host[:port][/prefix]`: every call's path is appended to it. */
  baseUrl: z.string().superRefine((t, ctx) => {
    const parsed = parseBaseUrl(t);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  }),
  /** The deadline of a call made outside an inbound call, and the most any call gets. 0: none. */
  timeoutMs: msSchema.default(0),
  /** Taken off the inbound call's remaining time, for the answer's way back. */
  deadlineMarginMs: msSchema.default(10),
  /** Retries of idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE), unless a call opts in. */
  retry: retrySchema,
  /** What the inbound caller sees of this client's failure when a handler rethrows it. */
  errors: clientErrorsSchema,
  /**
   * `round_robin`: each call to the next of the addresses `baseUrl`'s host resolves to (a headless
   * service's pods), skipping those that failed to connect; `pick_first`: undici's one pool per
   * origin (the system resolver's first address).
   */
  loadBalancing: z.enum(['pick_first', 'round_robin']).default('pick_first'),
  /** With `round_robin`: the host is resolved again this often (ms; 0: only at the first call). */
  resolveIntervalMs: msSchema.default(30_000),
  /** With `round_robin`: the DNS server (`host:port`) asked for the host's A/AAAA records; '' the system's resolver. */
  dnsServer: z.string().default(''),
  breaker: breakerSchema,
  propagate: propagateSchema,
  /** Credentials sent with every call (unless the call sets the header itself). Secrets: use `${VAR}`. */
  auth: clientAuthSchema,
  /**
   * The request header that carries the call's remaining time, grpc-gateway's `Grpc-Timeout`
   * (`1500m`: svcboot's gateway and grpc-gateway take it as the call's deadline); '' sends none.
   */
  deadlineHeader: z.string().trim().toLowerCase().default('grpc-timeout'),
  /** Headers sent with every call (unless the call sets them). */
  headers: z.record(z.string().trim().toLowerCase().min(1), z.string()).default({}),
  /** The outbound calls' middlewares: logging (a record per call), prom (svc_call_* and http_client_*), meta, … */
  middleware: middlewareSchema.describe(
    'The middlewares of outbound calls: logging (a record per call), prom (svc_call_* and http_client_*), meta and the others',
  ),
  /**
   * A `grpc` or `httpserver` entry of this app whose metrics route (`prom.enabled`) serves the
   * client's families; else they are on prom-client's default registry.
   */
  metricsEntry: z.string().default(''),
});

export type HttpClientConfig = z.output<typeof httpClientSchema>;
