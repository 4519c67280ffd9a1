import { z } from 'zod';
import { grpcCompressionSchema } from './grpc-compression.js';
import {
  compressionSchema,
  entryBaseShape,
  middlewareSchema,
  msSchema,
  observabilityShape,
  portSchema,
  promSchema,
  serverRoutesShape,
} from '@svcboot/entry-core';

/** A UI mount point: `/sw` and `/sw/` both mean the folder `/sw/`. */
const uiPath = (fallback: string) =>
  z
    .string()
    .startsWith('/')
    .default(fallback)
    .transform((p) => (p.endsWith('/') ? p : `${p}/`));

const uiSchema = (path: string) =>
  z.strictObject({ enabled: z.boolean().default(false), path: uiPath(path) }).prefault({});

/** protoc-gen-openapiv2's flags for the generated document, with its defaults. */
const openApiShape = {
  jsonNamesForFields: z.boolean().default(true),
  disableDefaultErrors: z.boolean().default(false),
  disableDefaultResponses: z.boolean().default(false),
  disableServiceTags: z.boolean().default(false),
  includePackageInTags: z.boolean().default(false),
  openapiNamingStrategy: z.enum(['legacy', 'simple', 'fqn', 'package']).default('legacy'),
  visibilityRestrictionSelectors: z.array(z.string().min(1)).default([]),
  enumsAsInts: z.boolean().default(false),
  omitEnumDefaultValue: z.boolean().default(false),
  simpleOperationIds: z.boolean().default(false),
  enableRpcDeprecation: z.boolean().default(false),
  ignoreComments: z.boolean().default(false),
  removeInternalComments: z.boolean().default(false),
  allowPatchFeature: z.boolean().default(true),
  repeatedPathParamSeparator: z.enum(['csv', 'pipes', 'ssv', 'tsv']).default('csv'),
  preserveRpcOrder: z.boolean().default(false),
  recursiveDepth: z.number().int().positive().default(1000),
};

const MiB = 1024 * 1024;

/** One `grpc:` item of boot.yaml, with every default. */
export const grpcSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  port: portSchema
    .default(8080)
    .describe(
      'The one TCP port for gRPC, the REST gateway, the UIs, /metrics and health; 0: the OS chooses',
    ),
  enableReflection: z
    .boolean()
    .default(false)
    .describe(
      'gRPC server reflection (v1 and v1alpha) for the added services and health, for grpcurl',
    ),
  enableSvcGwOption: z
    .boolean()
    .default(false)
    .describe(
      'svc-style gateway: unpopulated fields emitted, every header forwarded into metadata, response metadata copied back as headers',
    ),
  sw: z
    .strictObject({ enabled: z.boolean().default(false), path: uiPath('/sw/'), ...openApiShape })
    .prefault({})
    .describe(
      "Swagger UI on the generated OpenAPI documents (<path>swagger.json, <path>openapi.json) and protoc-gen-openapiv2's generator flags",
    ),
  docs: uiSchema('/docs/').describe(
    'RapiDoc on the generated OpenAPI document (enabled, path: /docs/)',
  ),
  prom: promSchema.describe(
    'The Prometheus scrape endpoint (enabled, path: /metrics) and the Pushgateway pusher',
  ),
  ...serverRoutesShape,
  middleware: middlewareSchema.describe(
    "The call middlewares of gRPC and gateway calls: logging, prom, meta and entry-core's (auth, jwt, cors, csrf, secure, rateLimit, timeout, trace)",
  ),
  errorModel: z
    .enum(['grpcGateway', 'google', 'amazon'])
    .default('grpcGateway')
    .describe(
      "The JSON error body of the gateway's errors: `grpcGateway` (google.rpc.Status as grpc-gateway writes it, `{code, message, details}`), `google` (Google's JSON API error) or `amazon`.",
    ),
  compression: compressionSchema.describe(
    'gzip/brotli for gateway (and UI) responses by Accept-Encoding (grpcCompression is for gRPC messages)',
  ),
  grpcCompression: grpcCompressionSchema.describe(
    'gzip for response messages to gRPC clients that accept it (grpc-accept-encoding)',
  ),
  gwOption: z
    .strictObject({
      marshal: z
        .strictObject({
          useProtoNames: z.boolean().default(false),
          emitUnpopulated: z.boolean().default(false),
          useEnumNumbers: z.boolean().default(false),
          indent: z.string().default(''),
        })
        .prefault({}),
      unmarshal: z.strictObject({ discardUnknown: z.boolean().default(false) }).prefault({}),
      routing: z
        .strictObject({
          /** A path bound only for other HTTP methods: 405 with `Allow` instead of grpc-gateway's 501 (code 12). */
          methodNotAllowed405: z.boolean().default(false),
          /** grpc-gateway WithDisablePathLengthFallback: a form POST no longer falls back to the path's GET binding. */
          disablePathLengthFallback: z.boolean().default(false),
          /** grpc-gateway WithDisableHTTPMethodOverride: `X-HTTP-Method-Override` on a form POST is ignored. */
          disableHttpMethodOverride: z.boolean().default(false),
        })
        .prefault({}),
      /** protoc-gen-grpc-gateway allow_patch_feature: a PATCH whose body is a field fills the request's FieldMask from the body's keys. */
      allowPatchFeature: z.boolean().default(true),
      /** How deeply request JSON may nest objects and arrays (400 beyond), checked before it is parsed. */
      maxJsonDepth: z.number().int().min(1).default(100),
      /** The most query parameters and form fields a gateway request may have (400 beyond). */
      maxQueryParams: z.number().int().min(1).default(1000),
    })
    .prefault({})
    .describe(
      "The REST gateway's JSON marshalling, routing and request limits (grpc-gateway's options)",
    ),
  protos: z
    .strictObject({
      files: z.array(z.string().min(1)).default([]),
      includeDirs: z.array(z.string().min(1)).default([]),
      /** Binary FileDescriptorSets (`buf build -o api.binpb`, `protoc --include_imports --descriptor_set_out`). */
      descriptorSets: z.array(z.string().min(1)).default([]),
    })
    .prefault({})
    .describe(
      'The .proto files to load (files, relative to includeDirs), their import roots, and binary descriptor sets',
    ),
  gwMappingFiles: z
    .array(z.string().min(1))
    .default([])
    .describe(
      "google.api.Service YAML files with HTTP rules (http.rules) for the gateway, besides the protos' google.api.http options",
    ),
  generateUnboundMethods: z
    .boolean()
    .default(false)
    .describe(
      'Serve every unary and server-streaming RPC without an HTTP rule at POST /<pkg>.<Service>/<Method> (body *)',
    ),
  grpcWeb: z
    .strictObject({ enabled: z.boolean().default(false) })
    .prefault({})
    .describe(
      "gRPC-Web (binary and text) over HTTP/1.1 on the entry's port, answered by the same handlers.",
    ),
  tls: z
    .strictObject({
      certFile: z.string().default(''),
      keyFile: z.string().default(''),
      certEntry: z.string().default(''),
    })
    .prefault({})
    .describe(
      "TLS on the port: certFile and keyFile (PEM), or a cert: entry's (certEntry); ALPN h2 goes to gRPC, http/1.1 to the gateway",
    ),
  maxRecvMsgSizeBytes: z
    .number()
    .int()
    .positive()
    .default(4 * MiB)
    .describe('The largest request message accepted (grpc.max_receive_message_length)'),
  maxSendMsgSizeBytes: z
    .number()
    .int()
    .positive()
    .default(2_147_483_647)
    .describe('The largest response message sent (grpc.max_send_message_length)'),
  shutdownTimeoutMs: msSchema
    .default(10_000)
    .describe('Time in-flight calls get to finish at shutdown before connections are cut'),
  handshakeTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      'How long a new connection may take to say whether it is HTTP/2 or HTTP/1.x (with TLS: to finish the handshake)',
    ),
  headersTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      'HTTP/1.1 (gateway, UIs, metrics): time a client may take to send its request headers.',
    ),
  requestTimeoutMs: msSchema
    .default(30_000)
    .describe('HTTP/1.1: time a client may take to send the whole request.'),
  // Our own sweep (connection-limits.ts), not grpc-js's `grpc.max_connection_idle_ms`, which
  // costs a timer refresh and a trace string per call.
  connectionIdleTimeoutMs: msSchema
    .default(300_000)
    .describe(
      'An HTTP/2 connection whose streams have all ended this long ago gets GOAWAY and is closed (0: never). Default 5 minutes',
    ),
  requestMessageTimeoutMs: msSchema
    .default(30_000)
    .describe(
      'A unary or server-streaming gRPC call whose request message is not complete this long after the call started ends with DEADLINE_EXCEEDED (0: never). Default 30 s.',
    ),
  maxConnections: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      "The most connections (gRPC and HTTP/1.1 together) open at once; 0: 80 % of the process's open-file limit, at most 10,000. Past it, new connections are closed (a few more are kept for /livez and /readyz).",
    ),
  http2FirstStreamTimeoutMs: msSchema
    .default(30_000)
    .describe(
      'An HTTP/2 connection that has opened no stream this long after it started is closed (0: never).',
    ),
  keepaliveTimeMs: z
    .number()
    .int()
    .positive()
    .default(7_200_000)
    .describe(
      "grpc-js `grpc.keepalive_time_ms`: the server pings each HTTP/2 connection this often and closes it when the PING is not acknowledged within keepaliveTimeoutMs (a peer gone without a FIN). gRPC's usual server default, 2 h; grpc-js's own default is never.",
    ),
  keepaliveTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(20_000)
    .describe(
      'grpc-js `grpc.keepalive_timeout_ms`: how long a keepalive PING may go unacknowledged.',
    ),
  enableChannelz: z
    .boolean()
    .default(false)
    .describe(
      'grpc-js channelz bookkeeping (per-call counters and traces for the channelz admin service).',
    ),
});

export type GrpcEntryConfig = z.output<typeof grpcSchema>;
