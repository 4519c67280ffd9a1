import { z } from 'zod';
import {
  compressionSchema,
  entryBaseShape,
  errorModelSchema,
  middlewareSchema,
  msSchema,
  observabilityShape,
  portSchema,
  promSchema,
  serverRoutesShape,
} from '@svcboot/entry-core';

/** One `httpserver:` list item (name, port, host, prom, plus middleware, limits and timeouts). */
export const httpEntrySchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  port: portSchema.default(8080).describe('The TCP port; 0: the OS chooses'),
  host: z.string().default('').describe('Interface to listen on; empty means all.'),
  middleware: middlewareSchema.describe(
    "The call middlewares: logging, prom, meta and entry-core's (auth, jwt, cors, csrf, secure, rateLimit, timeout, trace)",
  ),
  errorModel: errorModelSchema
    .default('google')
    .describe(
      'The JSON error body of rejections, recovered exceptions, 404s and 405s: `google` or `amazon`.',
    ),
  compression: compressionSchema.describe(
    'gzip/brotli for responses, negotiated by Accept-Encoding (off by default).',
  ),
  prom: promSchema.describe(
    'The Prometheus scrape endpoint (enabled, path: /metrics) and the Pushgateway pusher',
  ),
  ...serverRoutesShape,
  bodyLimitBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Largest request body accepted; larger ones get 413.'),
  headersTimeoutMs: msSchema
    .default(10_000)
    .describe('Time a client may take to send the request headers.'),
  requestTimeoutMs: msSchema
    .default(30_000)
    .describe('Time a client may take to send the whole request.'),
  keepAliveTimeoutMs: msSchema
    .default(5_000)
    .describe('Idle time before a keep-alive connection is closed.'),
  shutdownTimeoutMs: msSchema
    .default(10_000)
    .describe('Time in-flight requests get to finish at shutdown before connections are cut.'),
});
export type HttpEntryConfig = z.output<typeof httpEntrySchema>;
