import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  createFileRegistry,
  fromBinary,
  type DescMessage,
  type DescService,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { compressionGzip, createConnectTransport } from '@connectrpc/connect-node';
import {
  createGrpcWebTransport,
  createConnectTransport as createWebTransport,
} from '@connectrpc/connect-web';
import { Metadata, credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { bufBinary } from '@svcboot/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry } from '@svcboot/grpc-server';
import { jsonRecords } from '../../../grpc-server/src/test-support/harness.js';
import {
  greeterConfig,
  greeterDefinition,
  greeterImplementation,
  greeterProtoDir,
} from './test-support/greeter.js';

const run = promisify(execFile);
const buf = await bufBinary();

let dir: string;
let setFile: string;
let Greeter: DescService;
let Hint: DescMessage;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-connect-'));
  setFile = path.join(dir, 'greeter.binpb');
  await run(buf, ['build', greeterProtoDir, '-o', setFile]);
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, await readFile(setFile)));
  Greeter = registry.getService('connecttest.v1.Greeter')!;
  Hint = registry.getMessage('connecttest.v1.Hint')!;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Server {
  app: App;
  base: string;
  /** Shuts the app down and returns the records written. */
  stop(): Promise<Array<Record<string, unknown>>>;
}

let server: Server | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A grpc entry with Connect (and gRPC-Web) on, the Greeter (proto-loader) and the cors middleware. */
async function startGreeter(extraYaml = ''): Promise<Server> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'svcboot-connect-entry-'));
  const events = path.join(work, 'events.log');
  const app = await boot({
    configText: greeterConfig(
      'greeter',
      events,
      `    grpcWeb: { enabled: true }
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
      cors: { enabled: true, allowOrigins: ["https://app.example"] }
${extraYaml}`,
    ),
    cwd: work,
    argv: [],
    env: { ...process.env },
  });
  const entry = grpcEntry(app, 'api');
  entry.addService(greeterDefinition(), greeterImplementation);
  await app.bootstrap();
  return {
    app,
    base: `http://127.0.0.1:${entry.port}`,
    async stop() {
      await app.shutdown('test');
      const records = await jsonRecords(events);
      await rm(work, { recursive: true, force: true });
      return records;
    },
  };
}

interface SayResponse {
  text: string;
  big: bigint;
}
type CallOptions = {
  timeoutMs?: number;
  headers?: Record<string, string>;
  onHeader?: (h: Headers) => void;
  onTrailer?: (t: Headers) => void;
};
interface GreeterClient {
  say(req: { text: string; big?: bigint }, o?: CallOptions): Promise<SayResponse>;
  get(req: { text: string }, o?: CallOptions): Promise<SayResponse>;
  fail(req: { code: number; message: string }, o?: CallOptions): Promise<SayResponse>;
  wait(req: { text: string }, o?: CallOptions): Promise<SayResponse>;
  count(req: { n: number; failCode?: number }, o?: CallOptions): AsyncIterable<SayResponse>;
  join(req: AsyncIterable<{ text: string }>, o?: CallOptions): Promise<SayResponse>;
  chat(req: AsyncIterable<{ text: string }>, o?: CallOptions): AsyncIterable<SayResponse>;
}

function greeter(transport: Transport): GreeterClient {
  return createClient(Greeter, transport) as unknown as GreeterClient;
}

async function* texts(...values: string[]): AsyncIterable<{ text: string }> {
  for (const text of values) yield { text };
}

async function collect<T>(it: AsyncIterable<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of it) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items };
}

/** A Greeter client on each of connect-node's Connect transports: HTTP/1.1 and HTTP/2, JSON and proto. */
function* connectClients(baseUrl: string) {
  for (const httpVersion of ['1.1', '2'] as const)
    for (const useBinaryFormat of [false, true])
      yield {
        httpVersion,
        useBinaryFormat,
        client: greeter(createConnectTransport({ baseUrl, httpVersion, useBinaryFormat })),
      };
}

describe('the Connect protocol on the grpc entry port', () => {
  it('serves unary calls in JSON and proto over HTTP/1.1 and HTTP/2 (connect-node), with headers and trailers', async () => {
    server = await startGreeter();
    for (const { httpVersion, useBinaryFormat, client } of connectClients(server.base)) {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      const res = await client.say(
        { text: `${httpVersion}/${useBinaryFormat}`, big: 9007199254740993n },
        {
          headers: { 'x-custom': 'c1' },
          onHeader: (h) => {
            header = h;
          },
          onTrailer: (t) => {
            trailer = t;
          },
        },
      );
      expect(res.text).toBe(`hello ${httpVersion}/${useBinaryFormat}`);
      // int64 past 2^53 survives the JSON mapping (a string in JSON).
      expect(res.big).toBe(9007199254740993n);
      expect(header?.get('x-greeting')).toBe('hello');
      expect(header?.get('x-custom-seen')).toBe('c1');
      expect(trailer?.get('x-done')).toBe('yes');
    }
  });

  it('serves connect-web (fetch) clients', async () => {
    server = await startGreeter();
    for (const useBinaryFormat of [false, true]) {
      const client = greeter(
        createWebTransport({ baseUrl: server.base, useBinaryFormat, fetch: globalThis.fetch }),
      );
      expect((await client.say({ text: 'web' })).text).toBe('hello web');
      const streamed = await collect(client.count({ n: 2 }));
      expect(streamed.items.map((m) => m.text)).toEqual(['#0', '#1']);
    }
  });

  it('answers errors as Connect error JSON with details and the HTTP status of the code', async () => {
    server = await startGreeter();
    const client = greeter(createConnectTransport({ baseUrl: server.base, httpVersion: '1.1' }));
    const err = await client.fail({ code: 5, message: 'no such thing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    const ce = err as ConnectError;
    expect([ce.code, ce.rawMessage]).toEqual([Code.NotFound, 'no such thing']);
    expect(ce.findDetails(Hint)).toMatchObject([{ field: 'code', reason: 'asked for' }]);
    expect(ce.metadata.get('x-fail-reason')).toBe('asked');

    // The wire: the protocol specification's status for each code (connect-es codeToHttpStatus).
    const expected: Array<[number, number, string]> = [
      [1, 499, 'canceled'],
      [2, 500, 'unknown'],
      [3, 400, 'invalid_argument'],
      [5, 404, 'not_found'],
      [6, 409, 'already_exists'],
      [7, 403, 'permission_denied'],
      [8, 429, 'resource_exhausted'],
      [9, 400, 'failed_precondition'],
      [10, 409, 'aborted'],
      [11, 400, 'out_of_range'],
      [12, 501, 'unimplemented'],
      [13, 500, 'internal'],
      [14, 503, 'unavailable'],
      [15, 500, 'data_loss'],
      [16, 401, 'unauthenticated'],
    ];
    for (const [code, http, name] of expected) {
      const res = await fetch(`${server.base}/connecttest.v1.Greeter/Fail`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ code, message: `m${code}` }),
      });
      expect([code, res.status, res.headers.get('content-type')]).toEqual([
        code,
        http,
        'application/json',
      ]);
      const body = (await res.json()) as {
        code: string;
        message: string;
        details: Array<{ type: string; value: string }>;
      };
      expect(body.code).toBe(name);
      expect(body.message).toBe(`m${code}`);
      expect(body.details[0]?.type).toBe('connecttest.v1.Hint');
      // base64 without padding, the Hint's bytes
      expect(body.details[0]?.value).not.toMatch(/=/);
    }
  });

  it('takes the deadline from Connect-Timeout-Ms and refuses a malformed one', async () => {
    server = await startGreeter();
    const client = greeter(createConnectTransport({ baseUrl: server.base, httpVersion: '2' }));
    const err = await client.wait({ text: 'x' }, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);

    const res = await fetch(`${server.base}/connecttest.v1.Greeter/Wait`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'connect-timeout-ms': '100',
      },
      body: '{}',
    });
    expect(res.status).toBe(504);
    expect(((await res.json()) as { code: string }).code).toBe('deadline_exceeded');

    const bad = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'connect-timeout-ms': 'soon',
      },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_argument');
  });

  it('streams server messages, ending with trailers or with the error at the end', async () => {
    server = await startGreeter();
    for (const { client } of connectClients(server.base)) {
      let trailer: Headers | undefined;
      const ok = await collect(
        client.count(
          { n: 3 },
          {
            onTrailer: (t) => {
              trailer = t;
            },
          },
        ),
      );
      expect(ok.error).toBeUndefined();
      expect(ok.items.map((m) => m.text)).toEqual(['#0', '#1', '#2']);
      expect(trailer?.get('x-total')).toBe('3');

      const failed = await collect(client.count({ n: 2, failCode: 9 }));
      expect(failed.items.map((m) => m.text)).toEqual(['#0', '#1']);
      const e = failed.error as ConnectError;
      expect([e.code, e.rawMessage]).toEqual([Code.FailedPrecondition, 'count failed']);
      expect(e.metadata.get('x-why')).toBe('asked');

      // An error before any message (trailers-only on the gRPC side).
      const early = await collect(client.count({ n: 0, failCode: 7 }));
      expect(early.items).toEqual([]);
      expect((early.error as ConnectError).code).toBe(Code.PermissionDenied);
    }
  });

  it('serves GET for NO_SIDE_EFFECTS methods only', async () => {
    server = await startGreeter();
    const client = greeter(
      createConnectTransport({ baseUrl: server.base, httpVersion: '1.1', useHttpGet: true }),
    );
    expect((await client.get({ text: 'q' })).text).toBe('got q');
    const binary = greeter(
      createConnectTransport({
        baseUrl: server.base,
        httpVersion: '2',
        useHttpGet: true,
        useBinaryFormat: true,
      }),
    );
    expect((await binary.get({ text: 'b' })).text).toBe('got b');

    const message = encodeURIComponent(JSON.stringify({ text: 'raw' }));
    const res = await fetch(
      `${server.base}/connecttest.v1.Greeter/Get?connect=v1&encoding=json&message=${message}`,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ text: 'got raw' });

    // base64 of a gzipped message
    const zipped = gzipSync(Buffer.from('{"text":"zip"}')).toString('base64url');
    const res2 = await fetch(
      `${server.base}/connecttest.v1.Greeter/Get?connect=v1&encoding=json&base64=1&compression=gzip&message=${zipped}`,
    );
    expect(await res2.json()).toEqual({ text: 'got zip' });

    const notSafe = await fetch(
      `${server.base}/connecttest.v1.Greeter/Say?connect=v1&encoding=json&message=${message}`,
    );
    expect(notSafe.status).toBe(405);
  });

  it('compresses with gzip: Content-Encoding for unary, the envelope flag for streams', async () => {
    server = await startGreeter();
    for (const httpVersion of ['1.1', '2'] as const) {
      const client = greeter(
        createConnectTransport({
          baseUrl: server.base,
          httpVersion,
          sendCompression: compressionGzip,
          acceptCompression: [compressionGzip],
          compressMinBytes: 0,
        }),
      );
      const long = 'x'.repeat(5000);
      expect((await client.say({ text: long })).text).toBe(`hello ${long}`);
      const streamed = await collect(client.count({ n: 2 }));
      expect(streamed.items.map((m) => m.text)).toEqual(['#0', '#1']);
      const joined = await client.join(texts('a'.repeat(3000), 'b'));
      expect(joined.text).toBe(`${'a'.repeat(3000)}+b`);
    }

    // On the wire: a gzipped request body, and a gzipped answer for a client that accepts it.
    const res = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'content-encoding': 'gzip',
        'accept-encoding': 'gzip',
      },
      body: gzipSync(Buffer.from(JSON.stringify({ text: 'y'.repeat(4000) }))),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(((await res.json()) as { text: string }).text).toBe(`hello ${'y'.repeat(4000)}`);

    // A stream's messages: the envelope's compressed flag (0x01) and Connect-Content-Encoding.
    const big = Buffer.from(JSON.stringify({ text: 'z'.repeat(3000) }));
    const head = Buffer.alloc(5);
    head.writeUInt32BE(big.length, 1);
    const streamed = await fetch(`${server.base}/connecttest.v1.Greeter/Chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json', 'connect-accept-encoding': 'gzip' },
      body: Buffer.concat([head, big]),
    });
    expect(streamed.headers.get('connect-content-encoding')).toBe('gzip');
    const bytes = Buffer.from(await streamed.arrayBuffer());
    expect(bytes[0]).toBe(1);
    const first = bytes.readUInt32BE(1);
    expect(JSON.parse(gunzipSync(bytes.subarray(5, 5 + first)).toString())).toEqual({
      text: `echo ${'z'.repeat(3000)}`,
    });
    // The end-of-stream message: flag 0x02, small, so not compressed
    expect(bytes[5 + first]).toBe(2);
    expect(JSON.parse(bytes.subarray(10 + first).toString())).toEqual({});

    const unknown = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'connect-protocol-version': '1',
        'content-encoding': 'br',
      },
      body: '{}',
    });
    expect(unknown.status).toBe(501);
    expect(unknown.headers.get('accept-encoding')).toBe('gzip');
  });

  it('serves client and bidi streaming over HTTP/2', async () => {
    server = await startGreeter();
    for (const useBinaryFormat of [false, true]) {
      const client = greeter(
        createConnectTransport({ baseUrl: server.base, httpVersion: '2', useBinaryFormat }),
      );
      expect((await client.join(texts('a', 'b', 'c'))).text).toBe('a+b+c');
      const chat = await collect(client.chat(texts('x', 'y')));
      expect(chat.items.map((m) => m.text)).toEqual(['echo x', 'echo y']);
    }
  });

  it('checks the content type and the protocol version', async () => {
    server = await startGreeter();
    const plain = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'connect-protocol-version': '1' },
      body: 'hi',
    });
    expect(plain.status).toBe(415);
    // A streaming content type for a unary RPC
    const enveloped = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json' },
      body: '',
    });
    expect(enveloped.status).toBe(415);
    const version = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '2' },
      body: '{}',
    });
    expect(version.status).toBe(400);
    expect(await version.json()).toMatchObject({ code: 'invalid_argument' });
    // Without the version header a JSON POST to a path the gateway binds stays the gateway's.
    const gateway = await fetch(`${server.base}/connecttest.v1.Greeter/Fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"code":5,"message":"gw"}',
    });
    expect(gateway.status).toBe(404);
    // grpc-gateway's google.rpc.Status body: a numeric code
    expect(await gateway.json()).toMatchObject({ code: 5, message: 'gw' });
  });

  it('refuses a message over maxRecvMsgSizeBytes, decompressed ones too', async () => {
    server = await startGreeter('    maxRecvMsgSizeBytes: 1024\n');
    const connect = { 'content-type': 'application/json', 'connect-protocol-version': '1' };
    const big = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: connect,
      body: JSON.stringify({ text: 'x'.repeat(2000) }),
    });
    expect(big.status).toBe(429);
    expect(await big.json()).toMatchObject({ code: 'resource_exhausted' });
    // 100 kB of JSON that gzips to a few hundred bytes
    const bomb = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: { ...connect, 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(JSON.stringify({ text: ' '.repeat(100_000) }))),
    });
    expect(bomb.status).toBe(429);
    // A stream's envelope over the limit ends the stream with the error.
    const client = greeter(createConnectTransport({ baseUrl: server.base, httpVersion: '2' }));
    const err = await client.join(texts('y'.repeat(2000))).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    // Within the limit, the same calls go through.
    expect((await client.join(texts('a', 'b'))).text).toBe('a+b');
  });

  it('answers a CORS preflight for a Connect request and exposes the Connect headers', async () => {
    server = await startGreeter();
    const pre = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'content-type,connect-protocol-version,connect-timeout-ms',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(pre.headers.get('access-control-allow-headers')).toContain('connect-protocol-version');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');

    const res = await fetch(`${server.base}/connecttest.v1.Greeter/Say`, {
      method: 'POST',
      headers: {
        origin: 'https://app.example',
        'content-type': 'application/json',
        'connect-protocol-version': '1',
      },
      body: '{"text":"cors"}',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-greeting', 'trailer-x-done']));
  });

  it('records Connect calls with apiProtocol=Connect and counts them in the gRPC metrics', async () => {
    server = await startGreeter();
    const client = greeter(createConnectTransport({ baseUrl: server.base, httpVersion: '1.1' }));
    await client.say({ text: 'rec' }, { headers: { 'x-request-id': 'connect-1' } });
    const viaGet = greeter(
      createConnectTransport({ baseUrl: server.base, httpVersion: '2', useHttpGet: true }),
    );
    await viaGet.get({ text: 'rec' }, { headers: { 'x-request-id': 'connect-2' } });
    // gRPC-Web beside Connect: each adapter takes its own requests.
    const web = greeter(createGrpcWebTransport({ baseUrl: server.base, fetch: globalThis.fetch }));
    expect((await web.say({ text: 'web' }, { headers: { 'x-request-id': 'web-1' } })).text).toBe(
      'hello web',
    );
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).toMatch(
      /grpc_server_handled_total\{grpc_type="unary",grpc_service="connecttest.v1.Greeter",grpc_method="Say",grpc_code="OK"\} 2/,
    );
    // gRPC on the same port still reaches grpc-js past the Connect router.
    const grpc = new (makeGenericClientConstructor(greeterDefinition(), 'Greeter'))(
      server.base.slice('http://'.length),
      credentials.createInsecure(),
    ) as unknown as Record<
      string,
      (req: unknown, md: Metadata, cb: (err: unknown, res: { text: string }) => void) => void
    > & { close(): void };
    const md = new Metadata();
    md.set('x-request-id', 'grpc-1');
    const viaGrpc = await new Promise<{ text: string }>((resolve, reject) =>
      grpc['Say']!({ text: 'native' }, md, (err, res) => (err ? reject(err) : resolve(res))),
    );
    grpc.close();
    expect(viaGrpc.text).toBe('hello native');
    const records = await server.stop();
    server = undefined;
    const find = (id: string): Record<string, unknown> | undefined =>
      records.find((r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === id);
    const rec = find('connect-1');
    expect(rec).toMatchObject({ operation: '/connecttest.v1.Greeter/Say', resCode: 'OK' });
    const payloads = rec?.['payloads'] as Record<string, string>;
    expect(payloads['apiProtocol']).toBe('Connect');
    expect(payloads['remoteAddr'] ?? rec?.['remoteAddr']).toMatch(/^127\.0\.0\.1:\d+$/);
    const get = find('connect-2')?.['payloads'] as Record<string, string>;
    expect([get['apiProtocol'], get['gwMethod']]).toEqual(['Connect', 'GET']);
    const viaWeb = find('web-1')?.['payloads'] as Record<string, string> | undefined;
    expect(viaWeb?.['apiProtocol']).toBe('gRPC-Web');
    const native = find('grpc-1')?.['payloads'] as Record<string, string>;
    expect(native['apiProtocol']).toBe('HTTP/2');
  });

  it('answers buf curl --protocol connect over HTTP/1.1 and HTTP/2', async () => {
    server = await startGreeter();
    for (const h2 of [false, true]) {
      const args = [
        'curl',
        '--protocol',
        'connect',
        '--schema',
        setFile,
        ...(h2 ? ['--http2-prior-knowledge'] : []),
        '-d',
        '{"text":"buf"}',
        `${server.base}/connecttest.v1.Greeter/Say`,
      ];
      const { stdout } = await run(buf, args);
      expect(JSON.parse(stdout)).toEqual({ text: 'hello buf' });
      const failed = await run(buf, [
        ...args.slice(0, -3),
        '-d',
        '{"code":5,"message":"nope"}',
        `${server.base}/connecttest.v1.Greeter/Fail`,
      ]).catch((e: { stderr: string }) => e);
      expect(JSON.parse((failed as { stderr: string }).stderr)).toMatchObject({
        code: 'not_found',
        message: 'nope',
      });
    }
  });
});
