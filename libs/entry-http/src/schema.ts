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
  port: portSchema.default(8080),
  /** Interface to listen on; empty means all. */
  host: z.string().default(''),
  middleware: middlewareSchema,
  /** The JSON error body of rejections, recovered exceptions, 404s and 405s: `google` or `amazon`. */
  errorModel: errorModelSchema.default('google'),
  /** gzip/brotli for responses, negotiated by Accept-Encoding (off by default). */
  compression: compressionSchema,
  prom: promSchema,
  ...serverRoutesShape,
  /** Largest request body accepted; larger ones get 413. */
  bodyLimitBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /** Time a client may take to send the request headers. */
  headersTimeoutMs: msSchema.default(10_000),
  /** Time a client may take to send the whole request. */
  requestTimeoutMs: msSchema.default(30_000),
  /** Idle time before a keep-alive connection is closed. */
  keepAliveTimeoutMs: msSchema.default(5_000),
  /** Time in-flight requests get to finish at shutdown before connections are cut. */
  shutdownTimeoutMs: msSchema.default(10_000),
});
export type HttpEntryConfig = z.output<typeof httpEntrySchema>;
