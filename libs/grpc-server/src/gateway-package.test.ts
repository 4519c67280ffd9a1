import { boot, SvcError, type App } from '@svcboot/entry-core';
import { loadProtoRoot } from '@svcboot/openapi';
import { describe, expect, it } from 'vitest';
import { GATEWAY_PACKAGE, gatewayNeededBy, loadGatewayPackage } from './gateway-package.js';
import { grpcEntry, type GrpcEntry } from './index.js';
import { grpcSchema } from './schema.js';
import { libraryProto, protoDir } from './test-support/library-service.js';

const noServices = { serviceNames: (): string[] => [] };
const noRoot = (): undefined => undefined;

describe('the gateway package, loaded by the core when installed', () => {
  it('loads @svcboot/grpc-gateway when something needs it, or for preflights when it is installed', async () => {
    const pkg = await loadGatewayPackage('grpc[greeter]', 'sw');
    expect(GATEWAY_PACKAGE).toBe('@svcboot/grpc-gateway');
    expect(typeof pkg?.buildGateway).toBe('function');
    const forPreflights = await loadGatewayPackage('grpc[greeter]', undefined, true);
    expect(forPreflights).toBe(pkg);
  });

  it('not loaded when nothing needs it, though installed (a gRPC-only start)', async () => {
    await expect(loadGatewayPackage('grpc[greeter]', undefined)).resolves.toBeUndefined();
  });

  it('not installed and needed: a stable code, what needs it, the package and the npm install command', async () => {
    const missing = '@svcboot/grpc-gateway-not-installed';
    const err = await loadGatewayPackage('grpc[greeter]', 'sw', false, missing).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('SVC_GRPC_GATEWAY_NOT_INSTALLED');
    expect((err as SvcError).message).toContain(
      `grpc[greeter]: sw needs the REST gateway, which ${missing} provides and is not installed: run \`npm install ${missing}\``,
    );
  });

  it('not installed and not needed: none, and no error (gRPC-Web or Connect without CORS)', async () => {
    await expect(
      loadGatewayPackage('grpc[greeter]', undefined, true, '@svcboot/grpc-gateway-not-installed'),
    ).resolves.toBeUndefined();
  });
});

describe('what needs the gateway', () => {
  const config = (extra: Record<string, unknown> = {}) =>
    grpcSchema.parse({ name: 'g', port: 0, ...extra });

  it('nothing in a gRPC-only entry: health, metrics and Koa routes are the core’s', () => {
    expect(gatewayNeededBy(config({ prom: { enabled: true } }), noServices, noRoot)).toBe(
      undefined,
    );
    // gRPC-Web and Connect without CORS: their calls are grpc-browser's, no preflight to answer.
    expect(
      gatewayNeededBy(
        config({ grpcWeb: { enabled: true }, connect: { enabled: true } }),
        noServices,
        noRoot,
      ),
    ).toBe(undefined);
  });

  it('each key that serves HTTP rules or the UIs', () => {
    expect(gatewayNeededBy(config({ gwMappingFiles: ['gw.yaml'] }), noServices, noRoot)).toBe(
      'gwMappingFiles',
    );
    expect(gatewayNeededBy(config({ generateUnboundMethods: true }), noServices, noRoot)).toBe(
      'generateUnboundMethods',
    );
    expect(gatewayNeededBy(config({ sw: { enabled: true } }), noServices, noRoot)).toBe('sw');
    expect(gatewayNeededBy(config({ docs: { enabled: true } }), noServices, noRoot)).toBe('docs');
    const cors = { middleware: { cors: { enabled: true } } };
    expect(
      gatewayNeededBy(config({ ...cors, grpcWeb: { enabled: true } }), noServices, noRoot),
    ).toBe('grpcWeb');
    expect(
      gatewayNeededBy(config({ ...cors, connect: { enabled: true } }), noServices, noRoot),
    ).toBe('connect');
  });

  it('a (google.api.http) annotation of an added service', () => {
    const root = loadProtoRoot([libraryProto], [protoDir], process.cwd());
    const library = { serviceNames: (): string[] => ['test.v1.Library'] };
    expect(gatewayNeededBy(config(), library, () => root)).toBe(
      '(google.api.http) of test.v1.Library',
    );
  });
});

describe('an entry and the gateway package (installed in the workspace)', () => {
  const started = async (entryYaml: string): Promise<{ app: App; entry: GrpcEntry }> => {
    const app = await boot({
      configText: `app: { name: gw }\ngrpc:\n  - name: e\n    port: 0\n${entryYaml}`,
    });
    await app.bootstrap();
    return { app, entry: grpcEntry(app, 'e') };
  };

  it('gRPC only: the gateway is not used (no documents), health and metrics are the core’s, other paths 404', async () => {
    const { app, entry } = await started('    prom: { enabled: true }\n');
    try {
      expect(entry.openApiDocument).toBe('');
      const base = `http://127.0.0.1:${entry.port}`;
      for (const p of ['/livez', '/readyz', '/metrics'])
        expect((await fetch(base + p)).status, p).toBe(200);
      const missing = await fetch(`${base}/v1/nothing`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ code: 5, message: 'Not Found', details: [] });
    } finally {
      await app.shutdown('test');
    }
  });

  it('sw on: the gateway builds the documents and serves the UI', async () => {
    const { app, entry } = await started('    sw: { enabled: true }\n');
    try {
      expect(JSON.parse(entry.openApiDocument)).toMatchObject({ swagger: '2.0' });
      expect((await fetch(`http://127.0.0.1:${entry.port}/sw/swagger.json`)).status).toBe(200);
    } finally {
      await app.shutdown('test');
    }
  });
});
