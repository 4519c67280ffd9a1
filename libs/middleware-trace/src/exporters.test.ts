import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
// Registers middleware.trace, as an app's import of the package does.
import './index.js';
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import type { EntryContext } from '@svcboot/entry-core';
import { middlewareSchema } from '@svcboot/entry-core/call';
import type { TraceConfig } from './schema.js';
import { createProvider } from './tracer.js';

const ctx = {
  app: { name: 'zipdemo', version: '2.0.0', description: '' },
  output: () => ({ write: () => undefined }),
} as unknown as EntryContext;
const entry = {
  entryName: 'api',
  entryType: 'HttpEntry',
  registry: new Registry(),
  configPath: 'x',
};

describe('exporter.zipkin', () => {
  it('sends the spans as Zipkin v2 JSON to the endpoint as given, at shutdown at the latest', async () => {
    const bodies: Array<{ url: string; body: unknown }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ url: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const config = middlewareSchema.parse({
        trace: {
          enabled: true,
          exporter: {
            zipkin: { enabled: true, endpoint: `http://127.0.0.1:${port}/custom/spans` },
          },
        },
      })['trace'] as TraceConfig;
      const provider = createProvider(config, ctx, entry);
      const span = provider.getTracer('t').startSpan('GET /v1/x', { kind: SpanKind.SERVER });
      span.end();
      await provider.shutdown();
      expect(bodies).toHaveLength(1);
      expect(bodies[0]!.url).toBe('/custom/spans');
      expect(bodies[0]!.body).toMatchObject([
        {
          traceId: span.spanContext().traceId,
          id: span.spanContext().spanId,
          name: 'GET /v1/x',
          kind: 'SERVER',
          localEndpoint: { serviceName: 'zipdemo' },
        },
      ]);
    } finally {
      server.close();
    }
  });
});
