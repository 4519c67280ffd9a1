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
import { parseTarget } from './target.js';

/** gRPC status code names as service configs spell them (gRFC A6 `retryableStatusCodes`). */
export const STATUS_NAMES = [
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

const retrySchema = z
  .strictObject({
    /** gRFC A6: attempts including the first; 1 turns retries off; grpc-js caps it at 5. */
    maxAttempts: z.number().int().min(1).max(5).default(1),
    initialBackoffMs: z.number().int().positive().default(50),
    maxBackoffMs: z.number().int().positive().default(1000),
    backoffMultiplier: z.number().positive().default(2),
    retryableCodes: z.array(z.enum(STATUS_NAMES)).min(1).default(['UNAVAILABLE']),
    /** gRFC A6 retry throttling (a token bucket per channel): the retry budget. */
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
  });

/** One `grpcclient:` item. */
export const grpcClientSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  target: z.string().superRefine((t, ctx) => {
    const parsed = parseTarget(t);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  }),
  loadBalancing: z.enum(['pick_first', 'round_robin']).default('pick_first'),
  /** The deadline of a call made outside an inbound call, and the most any call gets. 0: none. */
  timeoutMs: msSchema.default(0),
  /** Taken off the inbound call's remaining time, for the answer's way back. */
  deadlineMarginMs: msSchema.default(10),
  retry: retrySchema.prefault({}),
  breaker: breakerSchema,
  propagate: propagateSchema,
  /** Credentials sent with every call (unless the call sets the header itself). Secrets: use `${VAR}`. */
  auth: clientAuthSchema,
  /** What the inbound caller sees of this client's failure when a handler rethrows it. */
  errors: clientErrorsSchema,
  tls: z
    .strictObject({
      enabled: z.boolean().default(false),
      /** A `cert:` entry: its CA verifies the server; its certificate and key, when given, are presented. */
      certEntry: z.string().default(''),
      /** The name the server's certificate must carry, when it is not the target's host. */
      serverName: z.string().default(''),
    })
    .prefault({}),
  /**
   * The outbound calls' middlewares, as a server's: `logging` (a record per call, with this
   * entry's type), `prom` (`svc_call_*` and `grpc_client_*`), `meta`, and entry-core's.
   */
  middleware: middlewareSchema.describe(
    'The middlewares of outbound calls: logging (a record per call), prom (svc_call_* and grpc_client_*), meta and the others',
  ),
  /**
   * A `grpc` or `httpserver` entry of this app whose metrics route (`prom.enabled`) serves the
   * client's families; else they are on prom-client's default registry.
   */
  metricsEntry: z.string().default(''),
  /** Connect at bootstrap (and wait for the channel to be ready) instead of at the first call. */
  eager: z.boolean().default(false),
  /** Whether the channel's state counts for the app's readiness (/readyz). */
  readinessCheck: z.boolean().default(false),
  /** grpc-js's reconnect backoff after a failed connection: its first delay and its cap. */
  reconnectBackoffMs: z
    .strictObject({
      initial: z.number().int().positive().default(1000),
      max: z.number().int().positive().default(120_000),
    })
    .prefault({}),
  /**
   * grpc-js's `grpc.dns_min_time_between_resolutions_ms`: a `dns:` target is resolved again when a
   * connection fails or closes (a replica gone, a server's max connection age), at most this often.
   */
  dnsMinIntervalMs: z.number().int().positive().default(30_000),
  /**
   * A `dns:` target is also resolved again every this many ms while the channel is in use (a new
   * replica in DNS gets calls without a connection closing first); 0: only on failure, as grpc-js.
   */
  resolveIntervalMs: msSchema.default(30_000),
  /** How long bootstrap waits for an `eager` channel to connect. */
  connectTimeoutMs: z.number().int().positive().default(5000),
});

export type GrpcClientConfig = z.output<typeof grpcClientSchema>;
