import { boot, ConfigError } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { grpcEntry } from './index.js';
import { grpcSchema } from './schema.js';

describe('grpc entry options', () => {
  it('has every default', () => {
    expect(grpcSchema.parse({ name: 'g' })).toEqual({
      name: 'g',
      enabled: true,
      domain: '',
      description: '',
      loggerEntry: '',
      eventEntry: '',
      port: 8080,
      enableReflection: false,
      enableSvcGwOption: false,
      sw: {
        enabled: false,
        path: '/sw/',
        headers: {},
        // protoc-gen-openapiv2's flag defaults.
        jsonNamesForFields: true,
        disableDefaultErrors: false,
        disableDefaultResponses: false,
        disableServiceTags: false,
        includePackageInTags: false,
        openapiNamingStrategy: 'legacy',
        visibilityRestrictionSelectors: [],
        enumsAsInts: false,
        omitEnumDefaultValue: false,
        simpleOperationIds: false,
        enableRpcDeprecation: false,
        ignoreComments: false,
        removeInternalComments: false,
        allowPatchFeature: true,
        repeatedPathParamSeparator: 'csv',
        preserveRpcOrder: false,
        recursiveDepth: 1000,
      },
      docs: { enabled: false, path: '/docs/', headers: {}, style: { theme: 'light' } },
      prom: {
        enabled: false,
        path: '/metrics',
        pusher: {
          enabled: false,
          intervalMs: 1000,
          jobName: '',
          remoteAddress: '',
          basicAuth: '',
          certEntry: '',
          instance: '',
        },
      },
      commonService: { enabled: false, pathPrefix: '/svc/v1' },
      pprof: { enabled: false, path: '/pprof/', maxSeconds: 300 },
      static: {
        enabled: false,
        path: '/static/',
        sourceType: 'local',
        sourcePath: '',
        listing: false,
      },
      // and the defaults of each middleware definition (auth, jwt, …), tested with their own code
      middleware: expect.objectContaining({
        logging: { enabled: false, ignore: [] },
        prom: { enabled: false, ignore: [] },
        meta: { enabled: false, ignore: [], prefix: 'Svc' },
        // entry-core's middleware definitions, each off (their options: entry-core's tests).
        timeout: expect.objectContaining({ enabled: false }),
        // entry-grpc's own, registered when it is imported.
        validate: { enabled: false, ignore: [] },
      }),
      gwOption: {
        marshal: {
          useProtoNames: false,
          emitUnpopulated: false,
          useEnumNumbers: false,
          indent: '',
          multiline: false,
          allowPartial: false,
        },
        unmarshal: { discardUnknown: false, allowPartial: false },
        routing: {
          methodNotAllowed405: false,
          disablePathLengthFallback: false,
          disableHttpMethodOverride: false,
        },
        allowPatchFeature: true,
        maxJsonDepth: 100,
        maxQueryParams: 1000,
        sseHeartbeatMs: 15_000,
      },
      protos: { files: [], includeDirs: [], descriptorSets: [] },
      gwMappingFiles: [],
      generateUnboundMethods: false,
      grpcWeb: { enabled: false },
      connect: { enabled: false },
      grpcCompression: { send: 'identity', minBytes: 1024, level: 6 },
      errorModel: 'grpcGateway',
      loadShedding: {
        enabled: true,
        maxInFlight: 5000,
        maxEventLoopDelayMs: 500,
        maxEventLoopUtilization: 0.95,
        retryAfterS: 1,
        critical: [],
        concurrency: { minLimit: 4, maxLimit: 5000 },
      },
      compression: {
        enabled: false,
        minBytes: 1024,
        encodings: ['br', 'gzip'],
        gzipLevel: 6,
        brotliQuality: 4,
      },
      tls: { certFile: '', keyFile: '', certEntry: '' },
      maxRecvMsgSizeBytes: 4 * 1024 * 1024,
      maxSendMsgSizeBytes: 2_147_483_647,
      noRecvMsgSizeLimit: false,
      shutdownTimeoutMs: 10_000,
      handshakeTimeoutMs: 10_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      connectionIdleTimeoutMs: 300_000,
      requestMessageTimeoutMs: 30_000,
      maxConnections: 0,
      http2FirstStreamTimeoutMs: 30_000,
      keepaliveTimeMs: 7_200_000,
      keepaliveTimeoutMs: 20_000,
      enableChannelz: false,
      server: 'node',
    });
  });

  it('reads UI paths with or without the trailing slash', () => {
    const c = grpcSchema.parse({
      name: 'g',
      sw: { enabled: true, path: '/swagger' },
      docs: { path: '/api-docs/' },
    });
    expect(c.sw.path).toBe('/swagger/');
    expect(c.docs.path).toBe('/api-docs/');
  });

  it("reads rk-boot's gwOption.marshal.multiline as a two-space indent, and the UI headers as a map", () => {
    const c = grpcSchema.parse({
      name: 'g',
      gwOption: {
        marshal: { multiline: true, allowPartial: true },
        unmarshal: { allowPartial: true },
      },
      sw: { headers: ['X-Frame-Options: DENY', 'sw:rk'] },
      noRecvMsgSizeLimit: true,
    });
    expect(c.gwOption.marshal.indent).toBe('  ');
    expect(
      grpcSchema.parse({ name: 'g', gwOption: { marshal: { multiline: true, indent: '\t' } } })
        .gwOption.marshal.indent,
    ).toBe('\t');
    expect(c.sw.headers).toEqual({ 'X-Frame-Options': 'DENY', sw: 'rk' });
    expect(c.noRecvMsgSizeLimit).toBe(true);
    expect(grpcSchema.safeParse({ name: 'g', docs: { headers: ['no colon'] } }).success).toBe(
      false,
    );
  });

  it('rejects misspelt options with their path and a suggestion', async () => {
    const err = await boot({
      configText:
        'grpc:\n  - name: greeter\n    port: 1\n    middlware: {}\n    sw: { enabeld: true }\n',
      argv: [],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const text = String((err as Error).message);
    expect(text).toContain('grpc[greeter].middlware');
    expect(text).toContain('middleware');
    expect(text).toContain('grpc[greeter].sw.enabeld');
  });

  it('is found by its typed getter, which names what exists on a wrong name', async () => {
    const app = await boot({ configText: 'grpc:\n  - name: greeter\n    port: 0\n', argv: [] });
    expect(grpcEntry(app, 'greeter').type).toBe('GrpcEntry');
    expect(() => grpcEntry(app, 'greter')).toThrow(/greeter/);
    expect(() => grpcEntry(app, 'greeter').port).toThrow(/after bootstrap/);
  });
});
