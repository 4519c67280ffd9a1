import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  credentials,
  makeGenericClientConstructor,
  status,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { grpcEntry } from '@svcboot/entry-grpc';
import { httpEntry } from '@svcboot/entry-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClientCallError, httpClient } from './index.js';

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** One unary method with JSON messages: a plain grpc-js service, no generated code. */
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const parse = (b: Buffer): unknown => JSON.parse(b.toString());
const definition: ServiceDefinition = {
  get: {
    path: '/test.Front/Get',
    requestStream: false,
    responseStream: false,
    requestSerialize: json,
    requestDeserialize: parse,
    responseSerialize: json,
    responseDeserialize: parse,
  },
};

describe("an httpclient's failure, rethrown by an httpserver handler", () => {
  let app: App;
  let front: string;
  const thrown = new Map<string, unknown>();

  beforeAll(async () => {
    const port = await closedPort();
    app = await boot({
      configText: `app: { name: front }
logger: [{ name: quiet, level: error }]
httpclient:
  - { name: hidden, baseUrl: "http://127.0.0.1:${port}", timeoutMs: 5000 }
  - { name: open, baseUrl: "http://127.0.0.1:${port}", timeoutMs: 5000, errors: { passThrough: true } }
httpserver: [{ name: api, port: 0, host: 127.0.0.1, loggerEntry: quiet }]
`,
      argv: [],
      env: {},
    });
    httpEntry(app, 'api').router.get('/v1/:client', async (ctx) => {
      // The handler lets the client's error propagate.
      try {
        await httpClient(app, ctx.params.client as string).fetch('/x', { call: ctx.state.call });
      } catch (err) {
        thrown.set(ctx.params.client as string, err);
        throw err;
      }
    });
    await app.bootstrap();
    front = `http://127.0.0.1:${httpEntry(app, 'api').port}`;
  });
  afterAll(async () => {
    await app?.shutdown('test');
  });

  it('by default, answers its status with a generic message: no address, no cause', async () => {
    const res = await fetch(`${front}/v1/hidden`);
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toContain('upstream \\"hidden\\" failed: 503');
    expect(body).not.toContain('127.0.0.1');
    expect(body).not.toContain('ECONNREFUSED');
    // The handler got the whole story.
    const err = thrown.get('hidden');
    expect(err).toBeInstanceOf(HttpClientCallError);
    expect((err as Error).message).toContain('ECONNREFUSED');
  });

  it('with errors.passThrough, answers the client error message', async () => {
    const res = await fetch(`${front}/v1/open`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('ECONNREFUSED');
  });

  it('rethrown by a gRPC handler: UNAVAILABLE with the generic message', async () => {
    const port = await closedPort();
    const grpcApp = await boot({
      configText: `app: { name: grpc-front }
logger: [{ name: quiet, level: error }]
httpclient: [{ name: hidden, baseUrl: "http://127.0.0.1:${port}", timeoutMs: 5000 }]
grpc: [{ name: front, port: 0, loggerEntry: quiet }]
`,
      argv: [],
      env: {},
    });
    try {
      grpcEntry(grpcApp, 'front').addService(definition, {
        // An async handler that throws the client's error (recovery catches the rejection).
        get: async () => {
          await httpClient(grpcApp, 'hidden').fetch('/x');
        },
      });
      await grpcApp.bootstrap();
      const Front = makeGenericClientConstructor(definition, 'Front');
      const client = new Front(
        `127.0.0.1:${grpcEntry(grpcApp, 'front').port}`,
        credentials.createInsecure(),
      ) as unknown as Client & {
        get(req: unknown, done: (err: ServiceError | null) => void): void;
      };
      const err = await new Promise<ServiceError | null>((resolve) =>
        client.get({}, (e) => resolve(e)),
      );
      client.close();
      expect(err?.code).toBe(status.UNAVAILABLE);
      expect(err?.details).toBe('upstream "hidden" failed: 503');
    } finally {
      await grpcApp.shutdown('test');
    }
  });
});
