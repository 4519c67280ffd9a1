import { openApiOptionsShape, protosSchema } from '@svcboot/openapi/internal/settings';
import { described, z } from '@svcboot/entry-core/internal/zod';
import { grpcCompressionSchema } from './grpc-compression.js';
import { entryBaseShape, observabilityShape } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/internal/middleware/options';
import { compressionSchema } from '@svcboot/entry-core/internal/http/compression';
import { loadSheddingSchema } from '@svcboot/entry-core/internal/overload/schema';
import {
  emptyTextSchema,
  msSchema,
  nonEmptyTextSchema,
  nonNegativeIntSchema,
  offSchema,
  onSchema,
  portSchema,
  positiveIntSchema,
} from '@svcboot/entry-core/internal/schema';
import { promSchema } from '@svcboot/entry-core/internal/prom-pusher/schema';
import { serverRoutesShape } from '@svcboot/entry-core/internal/server-routes';

/** A UI mount point: `/sw` and `/sw/` both mean the folder `/sw/`. */
const uiPath = (fallback: string) =>
  z
    .string()
    .startsWith('/')
    .default(fallback)
    .transform((p) => (p.endsWith('/') ? p : `${p}/`));

/**
 * Response headers for a UI's files, written rk-boot's way: `["name:value", …]` (the first `:`
 * splits; spaces around are trimmed).
 */
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

const docsSchema = z
  .strictObject({
    enabled: offSchema,
    path: uiPath('/docs/'),
    headers: uiHeaders,
    /** RapiDoc's colour theme. */
    style: z.strictObject({ theme: z.enum(['light', 'dark']).default('light') }).prefault({}),
  })
  .prefault({});

const MiB = 1024 * 1024;

/** One `grpc:` item of boot.yaml, with every default. */
export const grpcSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  port: described(
    portSchema.default(8080),
    'The one TCP port for gRPC, the REST gateway, the UIs, /metrics and health; 0: the OS chooses',
  ),
  gwPort: described(
    portSchema.optional(),
    "rk-grpc's second port, kept with app.porting: rk-boot only (refused otherwise): the entry also serves on it what it serves on port (the gateway, the UIs, the built-in routes), same chain, connection limit and drain",
  ),
  enableReflection: offSchema.describe(
    'gRPC server reflection (v1 and v1alpha) for the added services and health, for grpcurl',
  ),
  enableSvcGwOption: offSchema.describe(
    'svc-style gateway: unpopulated fields emitted, every header forwarded into metadata, response metadata copied back as headers',
  ),
  sw: described(
    z
      .strictObject({
        enabled: offSchema,
        path: uiPath('/sw/'),
        headers: uiHeaders,
        ...openApiOptionsShape,
      })
      .prefault({}),
    'Swagger UI on the generated OpenAPI documents (<path>swagger.json, <path>openapi.json), its files\' response headers ("name:value") and protoc-gen-openapiv2\'s generator flags',
  ),
  docs: docsSchema.describe(
    'RapiDoc on the generated OpenAPI document (enabled, path: /docs/, headers, style.theme)',
  ),
  prom: promSchema.describe(
    'The Prometheus scrape endpoint (enabled, path: /metrics) and the Pushgateway pusher',
  ),
  ...serverRoutesShape,
  middleware: middlewareSchema.describe(
    "The call middlewares of gRPC and gateway calls: logging, prom, meta and entry-core's (auth, jwt, cors, csrf, secure, rateLimit, timeout, trace) and validate (typed services' requests against their buf.validate rules)",
  ),
  errorModel: described(
    z.enum(['grpcGateway', 'google', 'amazon']).default('grpcGateway'),
    "The JSON error body of the gateway's errors: `grpcGateway` (google.rpc.Status as grpc-gateway writes it, `{code, message, details}`), `google` (Google's JSON API error) or `amazon`.",
  ),
  loadShedding: loadSheddingSchema.describe(
    'Load shedding of gRPC, gRPC-Web and gateway calls: RESOURCE_EXHAUSTED (gRPC) or 503 with Retry-After (HTTP) past maxInFlight calls or while the event loop is overloaded; /livez, /readyz, grpc.health.v1 and the metrics path are never shed (on by default)',
  ),
  compression: compressionSchema.describe(
    'gzip/brotli for gateway (and UI) responses by Accept-Encoding (grpcCompression is for gRPC messages)',
  ),
  grpcCompression: grpcCompressionSchema.describe(
    'gzip for response messages to gRPC clients that accept it (grpc-accept-encoding)',
  ),
  gwOption: described(
    z
      .strictObject({
        marshal: described(
          z
            .strictObject({
              useProtoNames: offSchema,
              emitUnpopulated: offSchema,
              useEnumNumbers: offSchema,
              indent: emptyTextSchema,
              /** protojson Multiline: one field a line, indented by `indent` (two spaces when it is empty). */
              multiline: offSchema,
              /**
               * protojson AllowPartial: no error for unset proto2 `required` fields. Accepted for
               * rk-boot files; svcboot never checks required fields (proto3 has none).
               */
              allowPartial: offSchema,
            })
            .prefault({}),
          'How gateway responses are written as JSON (useProtoNames, emitUnpopulated, useEnumNumbers, indent, multiline)',
        ).transform((m) => (m.multiline && m.indent === '' ? { ...m, indent: '  ' } : m)),
        unmarshal: described(
          z
            .strictObject({
              discardUnknown: offSchema,
              /** protojson AllowPartial on requests; as `marshal.allowPartial`, always so in svcboot. */
              allowPartial: offSchema,
            })
            .prefault({}),
          'How gateway request bodies are read (discardUnknown: ignore unknown fields; allowPartial)',
        ),
        routing: described(
          z
            .strictObject({
              methodNotAllowed405: offSchema.describe(
                "A path bound only for other HTTP methods: 405 with `Allow` instead of grpc-gateway's 501 (code 12).",
              ),
              disablePathLengthFallback: offSchema.describe(
                "grpc-gateway WithDisablePathLengthFallback: a form POST no longer falls back to the path's GET binding.",
              ),
              disableHttpMethodOverride: offSchema.describe(
                'grpc-gateway WithDisableHTTPMethodOverride: `X-HTTP-Method-Override` on a form POST is ignored.',
              ),
            })
            .prefault({}),
          'Gateway routing: methodNotAllowed405, disablePathLengthFallback, disableHttpMethodOverride',
        ),
        allowPatchFeature: onSchema.describe(
          "protoc-gen-grpc-gateway allow_patch_feature: a PATCH whose body is a field fills the request's FieldMask from the body's keys.",
        ),
        maxJsonDepth: described(
          z.number().int().min(1).default(100),
          'How deeply request JSON may nest objects and arrays (400 beyond), checked before it is parsed.',
        ),
        maxQueryParams: described(
          z.number().int().min(1).default(1000),
          'The most query parameters and form fields a gateway request may have (400 beyond).',
        ),
        sseHeartbeatMs: described(
          z.number().int().min(0).default(15_000),
          'Server-sent events (a server-streaming rule asked for text/event-stream): a comment line every this many ms keeps an idle stream open through proxies; 0 sends none.',
        ),
        maxUploadBytes: described(
          z.number().int().min(1).optional(),
          'The most bytes a multipart/form-data upload may have (413 beyond, nothing kept past it); default maxRecvMsgSizeBytes.',
        ),
      })
      .prefault({}),
    "The REST gateway's JSON marshalling, routing and request limits (grpc-gateway's options)",
  ),
  protos: protosSchema,
  gwMappingFiles: described(
    z.array(nonEmptyTextSchema).default([]),
    "google.api.Service YAML files with HTTP rules (http.rules) for the gateway, besides the protos' google.api.http options",
  ),
  generateUnboundMethods: offSchema.describe(
    'Serve every unary and server-streaming RPC without an HTTP rule at POST /<pkg>.<Service>/<Method> (body *)',
  ),
  grpcWeb: described(
    z.strictObject({ enabled: offSchema }).prefault({}),
    "gRPC-Web (binary and text) over HTTP/1.1 on the entry's port, answered by the same handlers.",
  ),
  connect: described(
    z.strictObject({ enabled: offSchema }).prefault({}),
    "The Connect protocol (connect-es, connect-go, buf curl) over HTTP/1.1 and HTTP/2 on the entry's port, answered by the same handlers.",
  ),
  tls: described(
    z
      .strictObject({
        certFile: emptyTextSchema.describe('PEM certificate file: the port speaks TLS'),
        keyFile: emptyTextSchema.describe('PEM private key file of certFile'),
        certEntry: emptyTextSchema.describe("Or a cert: entry's certPemPath and keyPemPath"),
      })
      .prefault({}),
    "TLS on the port: certFile and keyFile (PEM), or a cert: entry's (certEntry); ALPN h2 goes to gRPC, http/1.1 to the gateway",
  ),
  maxRecvMsgSizeBytes: described(
    positiveIntSchema.default(4 * MiB),
    'The largest request message accepted (grpc.max_receive_message_length)',
  ),
  maxSendMsgSizeBytes: described(
    positiveIntSchema.default(2_147_483_647),
    'The largest response message sent (grpc.max_send_message_length)',
  ),
  noRecvMsgSizeLimit: offSchema.describe(
    "rk-boot's: no limit on received messages (maxRecvMsgSizeBytes becomes 2 GiB - 1, grpc-js's most)",
  ),
  shutdownTimeoutMs: described(
    msSchema.default(10_000),
    'Time in-flight calls get to finish at shutdown before connections are cut',
  ),
  handshakeTimeoutMs: described(
    positiveIntSchema.default(10_000),
    'How long a new connection may take to say whether it is HTTP/2 or HTTP/1.x (with TLS: to finish the handshake)',
  ),
  headersTimeoutMs: described(
    positiveIntSchema.default(10_000),
    'HTTP/1.1 (gateway, UIs, metrics): time a client may take to send its request headers.',
  ),
  requestTimeoutMs: described(
    msSchema.default(30_000),
    'HTTP/1.1: time a client may take to send the whole request.',
  ),
  // Our own sweep (connection-limits.ts), not grpc-js's `grpc.max_connection_idle_ms`, which
  // costs a timer refresh and a trace string per call.
  connectionIdleTimeoutMs: described(
    msSchema.default(300_000),
    'An HTTP/2 connection whose streams have all ended this long ago gets GOAWAY and is closed (0: never). Default 5 minutes',
  ),
  requestMessageTimeoutMs: described(
    msSchema.default(30_000),
    'A unary or server-streaming gRPC call whose request message is not complete this long after the call started ends with DEADLINE_EXCEEDED (0: never). Default 30 s.',
  ),
  maxConnections: described(
    nonNegativeIntSchema.default(0),
    "The most connections (gRPC and HTTP/1.1 together) open at once; 0: 80 % of the process's open-file limit, at most 10,000. Past it, new connections are closed (a few more are kept for /livez and /readyz).",
  ),
  http2FirstStreamTimeoutMs: described(
    msSchema.default(30_000),
    'An HTTP/2 connection that has opened no stream this long after it started is closed (0: never).',
  ),
  keepaliveTimeMs: described(
    positiveIntSchema.default(7_200_000),
    "grpc-js `grpc.keepalive_time_ms`: the server pings each HTTP/2 connection this often and closes it when the PING is not acknowledged within keepaliveTimeoutMs (a peer gone without a FIN). gRPC's usual server default, 2 h; grpc-js's own default is never.",
  ),
  keepaliveTimeoutMs: described(
    positiveIntSchema.default(20_000),
    'grpc-js `grpc.keepalive_timeout_ms`: how long a keepalive PING may go unacknowledged.',
  ),
  enableChannelz: offSchema.describe(
    'grpc-js channelz bookkeeping (per-call counters and traces for the channelz admin service). grpc-js server only (`server: grpc-js`).',
  ),
  server: described(
    z.enum(['grpc-js', 'node']).default('node'),
    "What serves native gRPC on the entry's port: `node` (the default: gRPC's wire protocol on node:http2 as an adapter over the entry's method invoker, like Connect and gRPC-Web; every HTTP/2 stream of the port is routed by content type, so h2 clients reach the gateway and built-in routes too) or `grpc-js` (grpc-js's Server, interceptors inside it, used through its public API only; needed for enableChannelz; over HTTP/2 only native gRPC is served, calls grpc-js refuses itself are not recorded or are recorded Canceled, grpcCompression.send is not applied). See the README's \"Differences from grpc-js's server\" and \"server: grpc-js\".",
  ),
});

export type GrpcEntryConfig = z.output<typeof grpcSchema>;
