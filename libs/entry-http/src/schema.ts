import { described, z } from '@svcboot/entry-core/internal/zod';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import { errorModelSchema } from '@svcboot/entry-core/internal/middleware/error-model';
import { middlewareSchema } from '@svcboot/entry-core/internal/middleware/options';
import { compressionSchema } from '@svcboot/entry-core/internal/http/compression';
import { loadSheddingSchema } from '@svcboot/entry-core/internal/overload/schema';
import { msSchema, portSchema } from '@svcboot/entry-core/internal/schema';
import { promSchema } from '@svcboot/entry-core/internal/prom-pusher/schema';
import { serverRoutesShape } from '@svcboot/entry-core/internal/server-routes';

/** A UI mount point: `/sw` and `/sw/` both mean the folder `/sw/` (`sw`, without `/`, is rk-boot's spelling). */
const uiPath = (fallback: string) =>
  z
    .string()
    .startsWith('/')
    .default(fallback)
    .transform((p) => (p.endsWith('/') ? p : `${p}/`));

/** `["name:value", …]` (rk-boot's): response headers of a UI's files. */
const uiHeaders = z
  .array(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*:/, 'write each header as "name:value"'))
  .default([])
  .transform((list) =>
    Object.fromEntries(
      list.map((h) => {
        const i = h.indexOf(':');
        return [h.slice(0, i).trim(), h.slice(i + 1).trim()];
      }),
    ),
  );

/** Swagger UI on OpenAPI files the app provides (rk-gin's `sw`). */
const swSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    path: uiPath('/sw/'),
    /** Folders of `.json` OpenAPI files (every one is listed), or files; default `docs` (swag's output). */
    jsonPaths: z.array(z.string().min(1)).default([]),
    headers: uiHeaders,
  })
  .prefault({});

/** RapiDoc on an OpenAPI file the app provides (rk-gin's `docs`). */
const docsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    path: uiPath('/docs/'),
    /** OpenAPI files (`.json` or `.yaml`), or folders of them; the first is shown. Default: `sw.jsonPaths`'s. */
    specPaths: z.array(z.string().min(1)).default([]),
    headers: uiHeaders,
    style: z.strictObject({ theme: z.enum(['light', 'dark']).default('light') }).prefault({}),
  })
  .prefault({});

/** One `httpserver:` list item (name, port, host, prom, plus middleware, limits and timeouts). */
export const httpEntrySchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  port: described(portSchema.default(8080), 'The TCP port; 0: the OS chooses'),
  host: described(z.string().default(''), 'Interface to listen on; empty means all.'),
  sw: swSchema.describe(
    'Swagger UI on the OpenAPI files the app provides (enabled, path: /sw/, jsonPaths: folders or .json files, headers)',
  ),
  docs: docsSchema.describe(
    'RapiDoc on an OpenAPI file the app provides (enabled, path: /docs/, specPaths, headers, style.theme)',
  ),
  middleware: middlewareSchema.describe(
    "The call middlewares: logging, prom, meta and entry-core's (auth, jwt, cors, csrf, secure, rateLimit, timeout, trace)",
  ),
  errorModel: described(
    errorModelSchema.default('google'),
    'The JSON error body of rejections, recovered exceptions, 404s and 405s: `google` or `amazon`.',
  ),
  loadShedding: loadSheddingSchema.describe(
    'Load shedding: 503 with Retry-After past maxInFlight calls or while the event loop is overloaded; /livez, /readyz and the metrics path are never shed (on by default)',
  ),
  compression: compressionSchema.describe(
    'gzip/brotli for responses, negotiated by Accept-Encoding (off by default).',
  ),
  prom: promSchema.describe(
    'The Prometheus scrape endpoint (enabled, path: /metrics) and the Pushgateway pusher',
  ),
  ...serverRoutesShape,
  bodyLimitBytes: described(
    z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    'Largest request body accepted; larger ones get 413.',
  ),
  deadlineHeader: described(
    z.string().trim().toLowerCase().default(''),
    "A request header that carries the caller's remaining time in gRPC's timeout form (1500m, 2S), taken as the call's deadline: grpc-timeout is what svcboot's httpclient sends. '' (the default): none is read.",
  ),
  headersTimeoutMs: described(
    msSchema.default(10_000),
    'Time a client may take to send the request headers.',
  ),
  requestTimeoutMs: described(
    msSchema.default(30_000),
    'Time a client may take to send the whole request.',
  ),
  keepAliveTimeoutMs: described(
    msSchema.default(5_000),
    'Idle time before a keep-alive connection is closed.',
  ),
  shutdownTimeoutMs: described(
    msSchema.default(10_000),
    'Time in-flight requests get to finish at shutdown before connections are cut.',
  ),
});
export type HttpEntryConfig = z.output<typeof httpEntrySchema>;
