import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startConformance, type Conformance } from './test-support/harness.js';

// Metadata from and to HTTP headers, as runtime/context.go annotateContext and runtime/handler.go do.

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const seen = async (headers: Record<string, string>) => {
  const r = await request(c, 'GET', '/v1/headers', undefined, headers);
  expect(r.status, r.text).toBe(200);
  return { labels: (r.json as { labels: Record<string, string> }).labels, reply: r };
};

describe('headers (runtime/context.go, runtime/handler.go)', () => {
  it('runtime/context.go annotateContext: Grpc-Metadata-* without prefix, Authorization, permanent headers as grpcgateway-*, x-forwarded-host and x-forwarded-for added', async () => {
    const { labels } = await seen({
      'grpc-metadata-foo': 'bar',
      authorization: 'Bearer t',
      'user-agent': 'ua/1',
      'x-other': 'dropped',
    });
    expect(labels['foo']).toBe('bar');
    expect(labels['authorization']).toBe('Bearer t');
    expect(labels['grpcgateway-user-agent']).toBe('ua/1');
    expect(labels['x-other']).toBeUndefined();
    expect(labels['x-forwarded-host']).toBe(`127.0.0.1:${c.port}`);
    expect(labels['x-forwarded-for']).toBe('127.0.0.1');
    const fwd = await seen({ 'x-forwarded-host': 'api.example', 'x-forwarded-for': '10.0.0.1' });
    expect(fwd.labels['x-forwarded-host']).toBe('api.example');
    expect(fwd.labels['x-forwarded-for']).toBe('10.0.0.1, 127.0.0.1');
  });

  it('runtime/context.go decodeBinHeader: Grpc-Metadata-*-Bin is base64 (padded or not) decoded into binary metadata', async () => {
    const { labels } = await seen({
      'grpc-metadata-blob-bin': Buffer.from([1, 2, 255]).toString('base64'),
      'grpc-metadata-raw-bin': 'AQI',
    });
    expect(labels['blob-bin']).toBe('bin:0102ff');
    expect(labels['raw-bin']).toBe('bin:0102');
  });

  it('runtime/context.go isValidGRPCMetadataTextValue: a non-ASCII header value is left out (the call still runs)', async () => {
    // Sent raw: fetch and node:http refuse to send such a value.
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(c.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.once('error', reject);
      socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.write(
        Buffer.concat([
          Buffer.from(
            'GET /v1/headers HTTP/1.1\r\nHost: t\r\nConnection: close\r\nGrpc-Metadata-Ok: yes\r\nGrpc-Metadata-Bad: caf',
          ),
          Buffer.from([0xe9]),
          Buffer.from('\r\n\r\n'),
        ]),
      );
    });
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as {
      labels: Record<string, string>;
    };
    expect(body.labels['ok']).toBe('yes');
    expect(body.labels['bad']).toBeUndefined();
  });

  it('runtime/handler.go handleForwardResponseServerMetadata: every value of a metadata key is a Grpc-Metadata-* header line', async () => {
    const { reply } = await seen({});
    expect(reply.headers['grpc-metadata-multi']).toBe('a, b');
  });
});
