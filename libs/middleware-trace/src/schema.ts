import { z } from '@svcboot/entry-core/internal/zod';

/** `host:port` (the scheme then follows `insecure`) or an `http(s)://` URL. */
const endpoint = (what: string) =>
  z.string().refine((s) => toUrl(s, false, '/') !== undefined, {
    message: `${what} must be host:port or an http(s):// URL`,
  });

const toggle = { enabled: z.boolean().default(false) };

/** `middleware.trace` of a grpc or httpserver entry (rk-boot's key names where it has them). */
export const traceSchema = z.strictObject({
  enabled: z.boolean().default(false),
  ignore: z.array(z.string()).default([]),
  /** Which headers carry the incoming trace: W3C `traceparent`/`tracestate`, or B3 (single or multi). Baggage with both. */
  propagator: z.enum(['w3c', 'b3']).default('w3c'),
  /** Parent-based sampler: a call with an incoming sampled/unsampled parent follows it; a new trace is sampled at this ratio. */
  sampleRatio: z.number().min(0).max(1).default(1),
  exporter: z
    .strictObject({
      otlp: z
        .strictObject({
          ...toggle,
          /** OTLP over HTTP/protobuf: `http://collector:4318` (`/v1/traces` added when the URL has no path). */
          endpoint: endpoint('exporter.otlp.endpoint').default('http://localhost:4318'),
          /** Sent with every export (e.g. an API key: use `${VAR}`). */
          headers: z.record(z.string(), z.string()).default({}),
          /** For a `host:port` endpoint: plain HTTP instead of HTTPS. */
          insecure: z.boolean().default(false),
        })
        .prefault({}),
      file: z
        .strictObject({
          ...toggle,
          /** `stdout`, `stderr` or a file path: one JSON line per span. */
          outputPath: z.string().min(1).default('stdout'),
        })
        .prefault({}),
      zipkin: z
        .strictObject({
          ...toggle,
          endpoint: endpoint('exporter.zipkin.endpoint').default(
            'http://localhost:9411/api/v2/spans',
          ),
        })
        .prefault({}),
    })
    .prefault({}),
});
export type TraceConfig = z.output<typeof traceSchema>;

/**
 * An endpoint as a URL: `host:port` gets `http://` (insecure) or `https://`; a URL without a path
 * gets `defaultPath`. Undefined when it is neither.
 */
export function toUrl(
  endpoint: string,
  insecure: boolean,
  defaultPath: string,
): string | undefined {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)
    ? endpoint
    : `${insecure ? 'http' : 'https'}://${endpoint}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '') return undefined;
  if (url.pathname === '/' || url.pathname === '') url.pathname = defaultPath;
  return url.toString();
}
