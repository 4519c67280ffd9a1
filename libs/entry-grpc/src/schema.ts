import { openApiOptionsShape, protosSchema } from '@svcboot/openapi';
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
    enabled: z.boolean().default(false),
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
  port: portSchema.default(8080),
  enableReflection: z.boolean().default(false),
  /**
   * Request validation of typed services from the protos' `buf.validate` rules (protovalidate):
   * INVALID_ARGUMENT with a google.rpc.BadRequest (gateway: 400), before the handler.
   */
  validate: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
  enableSvcGwOption: z.boolean().default(false),
  sw: z
    .strictObject({
      enabled: z.boolean().default(false),
      path: uiPath('/sw/'),
      headers: uiHeaders,
      ...openApiOptionsShape,
    })
    .prefault({}),
  docs: docsSchema,
  prom: promSchema,
  ...serverRoutesShape,
  middleware: middlewareSchema,
  /**
   * The JSON error body of the gateway's errors: `grpcGateway` (google.rpc.Status as grpc-gateway
   * writes it, `{code, message, details}`), `google` (Google's JSON API error) or `amazon`.
   */
  errorModel: z.enum(['grpcGateway', 'google', 'amazon']).default('grpcGateway'),
  /** gzip/brotli for gateway (and UI) responses by Accept-Encoding; `grpc` for gRPC messages. */
  compression: compressionSchema,
  /** gzip for response messages to gRPC clients that accept it (see grpc-compression.ts). */
  grpcCompression: grpcCompressionSchema,
  gwOption: z
    .strictObject({
      marshal: z
        .strictObject({
          useProtoNames: z.boolean().default(false),
          emitUnpopulated: z.boolean().default(false),
          useEnumNumbers: z.boolean().default(false),
          indent: z.string().default(''),
          /** protojson Multiline: one field a line, indented by `indent` (two spaces when it is empty). */
          multiline: z.boolean().default(false),
          /**
           * protojson AllowPartial: no error for unset proto2 `required` fields. Accepted for
           * rk-boot files; svcboot never checks required fields (proto3 has none).
           */
          allowPartial: z.boolean().default(false),
        })
        .prefault({})
        .transform((m) => (m.multiline && m.indent === '' ? { ...m, indent: '  ' } : m)),
      unmarshal: z
        .strictObject({
          discardUnknown: z.boolean().default(false),
          /** protojson AllowPartial on requests; as `marshal.allowPartial`, always so in svcboot. */
          allowPartial: z.boolean().default(false),
        })
        .prefault({}),
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
    .prefault({}),
  protos: protosSchema,
  gwMappingFiles: z.array(z.string().min(1)).default([]),
  generateUnboundMethods: z.boolean().default(false),
  /** gRPC-Web (binary and text) over HTTP/1.1 on the entry's port, answered by the same handlers. */
  grpcWeb: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
  tls: z
    .strictObject({
      certFile: z.string().default(''),
      keyFile: z.string().default(''),
      certEntry: z.string().default(''),
    })
    .prefault({}),
  maxRecvMsgSizeBytes: z
    .number()
    .int()
    .positive()
    .default(4 * MiB),
  maxSendMsgSizeBytes: z.number().int().positive().default(2_147_483_647),
  /** rk-boot's: no limit on received messages (maxRecvMsgSizeBytes becomes 2 GiB - 1, grpc-js's most). */
  noRecvMsgSizeLimit: z.boolean().default(false),
  shutdownTimeoutMs: msSchema.default(10_000),
  handshakeTimeoutMs: z.number().int().positive().default(10_000),
  /** HTTP/1.1 (gateway, UIs, metrics): time a client may take to send its request headers. */
  headersTimeoutMs: z.number().int().positive().default(10_000),
  /** HTTP/1.1: time a client may take to send the whole request. */
  requestTimeoutMs: msSchema.default(30_000),
  /**
   * An HTTP/2 connection whose streams have all ended this long ago gets GOAWAY and is closed
   * (0: never). Default 5 minutes. Our own sweep (connection-limits.ts), not grpc-js's
   * `grpc.max_connection_idle_ms`, which costs a timer refresh and a trace string per call.
   */
  connectionIdleTimeoutMs: msSchema.default(300_000),
  /**
   * A unary or server-streaming gRPC call whose request message is not complete this long after
   * the call started ends with DEADLINE_EXCEEDED (0: never). Default 30 s.
   */
  requestMessageTimeoutMs: msSchema.default(30_000),
  /**
   * The most connections (gRPC and HTTP/1.1 together) open at once; 0: 80 % of the process's
   * open-file limit, at most 10,000. Past it, new connections are closed (a few more are kept
   * for /livez and /readyz).
   */
  maxConnections: z.number().int().nonnegative().default(0),
  /** An HTTP/2 connection that has opened no stream this long after it started is closed (0: never). */
  http2FirstStreamTimeoutMs: msSchema.default(30_000),
  /**
   * grpc-js `grpc.keepalive_time_ms`: the server pings each HTTP/2 connection this often and
   * closes it when the PING is not acknowledged within keepaliveTimeoutMs (a peer gone without a
   * FIN). gRPC's usual server default, 2 h; grpc-js's own default is never.
   */
  keepaliveTimeMs: z.number().int().positive().default(7_200_000),
  /** grpc-js `grpc.keepalive_timeout_ms`: how long a keepalive PING may go unacknowledged. */
  keepaliveTimeoutMs: z.number().int().positive().default(20_000),
  /** grpc-js channelz bookkeeping (per-call counters and traces for the channelz admin service). */
  enableChannelz: z.boolean().default(false),
});

export type GrpcEntryConfig = z.output<typeof grpcSchema>;
