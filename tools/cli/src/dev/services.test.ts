import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spansOverrides } from './services.js';

const chainDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../apps/demo-chain',
);

describe('spansOverrides', () => {
  it("points each traced entry's Zipkin exporter at svc dev, and only those (demo-chain's front.yaml)", () => {
    // front.yaml: grpc[front] has middleware.trace on; its grpcclient and httpclient do not.
    expect(
      spansOverrides(path.join(chainDir, 'front.yaml'), 'http://127.0.0.1:9400/api/v2/spans'),
    ).toEqual([
      'grpc.front.middleware.trace.exporter.zipkin.enabled=true',
      'grpc.front.middleware.trace.exporter.zipkin.endpoint="http://127.0.0.1:9400/api/v2/spans"',
    ]);
    expect(spansOverrides(path.join(chainDir, 'billing.yaml'), 'http://x:1/s')).toEqual([
      'httpserver.billing.middleware.trace.exporter.zipkin.enabled=true',
      'httpserver.billing.middleware.trace.exporter.zipkin.endpoint="http://x:1/s"',
    ]);
  });
});
