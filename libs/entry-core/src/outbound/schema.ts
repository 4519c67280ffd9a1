import { z } from '../zod.js';
import { emptyTextSchema, nonNegativeIntSchema, offSchema, positiveIntSchema } from '../schema.js';

/** `breaker:` of a client entry: adaptive throttling (Google SRE book; kratos' `sre` breaker). */
export const breakerSchema = z
  .strictObject({
    enabled: offSchema,
    /** Google SRE's K: accepts are multiplied by it; lower throttles sooner. kratos: 1.5. */
    k: z.number().min(1).default(1.5),
    /** The sliding window the requests and accepts are counted over. */
    windowMs: positiveIntSchema.default(3000),
    /** Buckets of the window. */
    buckets: z.number().int().min(1).max(1000).default(10),
    /** No throttling below this many requests in the window. kratos: 100. */
    minRequests: nonNegativeIntSchema.default(100),
  })
  .prefault({});

/** `propagate:` of a client entry: inbound headers copied onto outbound calls. */
export const propagateSchema = z
  .strictObject({
    /** Inbound metadata (header) names copied onto the outbound call, lowercase. */
    metadata: z.array(z.string().trim().toLowerCase().min(1)).default([]),
  })
  .prefault({});

/** `auth:` of a client entry: credentials sent with every call (unless the call sets the header). */
export const clientAuthSchema = z
  .strictObject({
    /** `authorization: Bearer <bearerToken>`. Write `${VAR}`. */
    bearerToken: emptyTextSchema,
    /** Sent in `apiKeyHeader`. Write `${VAR}`. */
    apiKey: emptyTextSchema,
    apiKeyHeader: z.string().trim().toLowerCase().min(1).default('x-api-key'),
    /** Forward the inbound call's `authorization` (the caller's token) instead of `bearerToken`. */
    forwardCaller: offSchema,
  })
  .prefault({});

/**
 * The headers a client's `auth` sends on every call, and the inbound headers it forwards (with
 * `forwardCaller`, `authorization` goes first: the caller's token wins over `bearerToken`).
 */
export function clientCredentials(
  auth: z.output<typeof clientAuthSchema>,
  metadata: readonly string[],
): { fixed: readonly (readonly [string, string])[]; metadata: readonly string[] } {
  const fixed: (readonly [string, string])[] = [];
  if (auth.bearerToken) fixed.push(['authorization', `Bearer ${auth.bearerToken}`]);
  if (auth.apiKey) fixed.push([auth.apiKeyHeader, auth.apiKey]);
  const forwarded =
    auth.forwardCaller && !metadata.includes('authorization')
      ? ['authorization', ...metadata]
      : metadata;
  return { fixed, metadata: forwarded };
}

/**
 * `errors:` of a client entry: what the inbound caller sees when a handler lets this client's
 * failure propagate (rethrows it).
 */
export const clientErrorsSchema = z
  .strictObject({
    /**
     * Pass the backend's message and details on to the inbound caller; else it reads
     * `upstream "<client>" failed: <code>` (the code or status is kept; the record keeps the text).
     */
    passThrough: offSchema,
  })
  .prefault({});
