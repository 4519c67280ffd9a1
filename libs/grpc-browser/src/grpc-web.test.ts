import {
  createFileRegistry,
  fromBinary,
  type DescFile,
  type DescService,
} from '@bufbuild/protobuf';
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
} from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import http from 'node:http';
import http2 from 'node:http2';
import { loadSync } from '@grpc/proto-loader';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { libraryProto, protoDir } from '../../grpc-server/src/test-support/library-service.js';
import { startLibrary, type Harness } from '../../grpc-server/src/test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** test.v1.Library as @bufbuild/protobuf sees it, from the descriptors proto-loader builds. */
function libraryService(): DescService {
  const pkg = loadSync(libraryProto, { includeDirs: [protoDir] });
  const protos = new Map<string, Uint8Array>();
  for (const def of Object.values(pkg)) {
    for (const bytes of (def as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos ?? []) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      protos.set(file.name, bytes);
    }
  }
  const files = [...protos.values()].map((b) => {
    const file = fromBinary(FileDescriptorProtoSchema, b);
    // protobufjs writes type names as the .proto spells them (`Genre`, `google.protobuf.Timestamp`);
    // descriptors want them fully qualified (`.test.v1.Genre`). Enough for these test files.
    const qualify = (messages: typeof file.messageType): void => {
      for (const m of messages) {
        for (const f of m.field)
          if (f.typeName && !f.typeName.startsWith('.'))
            f.typeName = f.typeName.includes('.')
              ? `.${f.typeName}`
              : `.${file.package}.${f.typeName}`;
        qualify(m.nestedType);
      }
    };
    qualify(file.messageType);
    for (const s of file.service)
      for (const m of s.method)
        for (const k of ['inputType', 'outputType'] as const)
          if (!m[k].startsWith('.'))
            m[k] = m[k].includes('.') ? `.${m[k]}` : `.${file.package}.${m[k]}`;
    return file;
  });
  const wkt: Record<string, DescFile> = {
    'google/protobuf/wrappers.proto': file_google_protobuf_wrappers,
    'google/protobuf/timestamp.proto': file_google_protobuf_timestamp,
  };
  // protobufjs names its files by package (`test_v1.proto`) and leaves the imports out.
  const lib = files.find((f) => f.package === 'test.v1');
  if (!lib) throw new Error('no test.v1 file among the descriptors');
  lib.dependency = Object.keys(wkt);
  const registry = createFileRegistry(lib, (name) => wkt[name]);
  const service = registry.getService('test.v1.Library');
  if (!service) throw new Error('test.v1.Library not in the registry');
  return service;
}

type Library = Record<string, (...args: unknown[]) => unknown>;

function client(base: string, useBinaryFormat = true): Library {
  const transport = createGrpcWebTransport({ baseUrl: base, useBinaryFormat });
  return createClient(libraryService(), transport) as unknown as Library;
}

describe('gRPC-Web on the entry port (connect-web grpc-web transport, in Node)', () => {
  it('answers unary and server-streaming calls through the same handlers and middleware, with the record', async () => {
    h = await startLibrary('    grpcWeb: { enabled: true }\n');
    const lib = client(h.base);
    let responseHeader: Headers | undefined;
    const pong = (await lib['ping']!(
      { text: 'web' },
      {
        headers: { 'x-request-id': 'web-1' },
        onHeader: (hd: Headers) => void (responseHeader = hd),
      },
    )) as { text: string };
    expect(pong.text).toBe('pong web');
    expect(responseHeader?.get('x-request-id')).toBe('web-1');

    const books: string[] = [];
    for await (const b of lib['listBooks']!({ shelf: 's1', count: 3 }) as AsyncIterable<{
      id: string;
      shelf: string;
    }>)
      books.push(`${b.id}@${b.shelf}`);
    expect(books).toEqual(['b0@s1', 'b1@s1', 'b2@s1']);

    const failed = await (lib['fail']!({ code: 5 }) as Promise<unknown>).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConnectError);
    expect([(failed as ConnectError).code, (failed as ConnectError).rawMessage]).toEqual([
      Code.NotFound,
      'failed with 5',
    ]);

    // an error after a message: the status comes in the trailer frame
    const partial: string[] = [];
    const streamError = await (async () => {
      try {
        for await (const b of lib['listBooks']!({ shelf: 's2', count: -1 }) as AsyncIterable<{
          id: string;
        }>)
          partial.push(b.id);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(partial).toEqual(['first']);
    expect((streamError as ConnectError).code).toBe(Code.FailedPrecondition);

    const records = await h.stop();
    h = undefined;
    const rec = records.find(
      (r) => (r['ids'] as Record<string, string> | undefined)?.['requestId'] === 'web-1',
    );
    expect(rec).toMatchObject({ operation: '/test.v1.Library/Ping', resCode: 'OK' });
    const payloads = rec?.['payloads'] as Record<string, string>;
    expect(payloads['apiProtocol']).toBe('gRPC-Web');
    expect(payloads['remoteAddr'] ?? rec?.['remoteAddr']).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('answers grpc-web-text (base64) requests', async () => {
    h = await startLibrary('    grpcWeb: { enabled: true }\n');
    const frame = Buffer.alloc(5 + 5);
    // PingRequest { text: "abc" }: field 1, length 3
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(5, 1);
    Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63]).copy(frame, 5);
    const res = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web-text', 'x-grpc-web': '1' },
      body: frame.toString('base64'),
    });
    const text = await res.clone().text();
    expect([res.status, res.headers.get('content-type'), text.slice(0, 200)]).toEqual([
      200,
      'application/grpc-web-text+proto',
      expect.any(String),
    ]);
    const body = Buffer.from(await res.text(), 'base64');
    // a message frame ("pong abc"), then the trailer frame with grpc-status 0
    expect(body[0]).toBe(0);
    const len = body.readUInt32BE(1);
    expect(body.subarray(5, 5 + len).toString('latin1')).toContain('pong abc');
    const trailer = body.subarray(5 + len);
    expect(trailer[0]).toBe(0x80);
    expect(trailer.subarray(5).toString('latin1')).toMatch(/grpc-status:0\r\n/);
  });

  it('answers gRPC-Web over HTTP/2 too (what a browser negotiates on TLS), while gRPC on the same connection stays gRPC', async () => {
    h = await startLibrary('    grpcWeb: { enabled: true }\n');
    const session = http2.connect(h.base);
    try {
      const frame = Buffer.from([0, 0, 0, 0, 5, 0x0a, 0x03, 0x68, 0x32, 0x21]); // text: "h2!"
      const ask = (contentType: string) =>
        new Promise<{
          headers: http2.IncomingHttpHeaders;
          body: Buffer;
          trailers: http2.IncomingHttpHeaders;
        }>((resolve, reject) => {
          const req = session.request({
            ':method': 'POST',
            ':path': '/test.v1.Library/Ping',
            'content-type': contentType,
            te: 'trailers',
          });
          let headers: http2.IncomingHttpHeaders = {};
          let trailers: http2.IncomingHttpHeaders = {};
          const chunks: Buffer[] = [];
          req.on('response', (hd) => void (headers = hd));
          req.on('trailers', (t) => void (trailers = t));
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => resolve({ headers, body: Buffer.concat(chunks), trailers }));
          req.on('error', reject);
          req.end(frame);
        });
      const web = await ask('application/grpc-web+proto');
      if (process.env['SVC_GRPC_SERVER'] === 'grpc-js') {
        // README, "server: grpc-js": every HTTP/2 stream is grpc-js's, and grpc-js takes
        // gRPC-Web for gRPC (a gRPC response, its status in HTTP/2 trailers).
        expect(web.headers['content-type']).toMatch(/^application\/grpc(\+proto)?$/);
        expect(web.trailers['grpc-status']).toBe('0');
      } else {
        expect(web.headers['content-type']).toBe('application/grpc-web+proto');
        const len = web.body.readUInt32BE(1);
        expect(web.body.subarray(5, 5 + len).toString('latin1')).toContain('pong h2!');
        expect(web.body[5 + len]).toBe(0x80);
        expect(web.body.subarray(10 + len).toString('latin1')).toContain('grpc-status:0');
      }
      const native = await ask('application/grpc');
      expect(native.headers['content-type']).toMatch(/^application\/grpc(\+proto)?$/);
      expect(native.trailers['grpc-status']).toBe('0');
    } finally {
      session.close();
    }
  });

  it('decodes text bodies whose messages were base64-encoded one by one (padding inside the body)', async () => {
    h = await startLibrary('    grpcWeb: { enabled: true }\n');
    // Collect(stream Book): two frames, each base64 on its own (the first ends in '==')
    const book = (title: string): Buffer => {
      const msg = Buffer.concat([Buffer.from([0x12, title.length]), Buffer.from(title)]);
      const head = Buffer.alloc(5);
      head.writeUInt32BE(msg.length, 1);
      return Buffer.concat([head, msg]);
    };
    const body = book('abc').toString('base64') + book('defg').toString('base64');
    expect(book('abc').toString('base64')).toMatch(/=$/);
    const res = await fetch(`${h.base}/test.v1.Library/Collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web-text' },
      body,
    });
    const out = Buffer.from(await res.text(), 'base64').toString('latin1');
    expect(out).toContain('abc');
    expect(out).toContain('defg');
    expect(out).toMatch(/grpc-status:0/);
  });

  it('holds a streaming handler back while the browser does not read (no unbounded buffering)', async () => {
    let written = 0;
    let held = false;
    h = await startLibrary('    grpcWeb: { enabled: true }\n', {
      overrides: {
        ListBooks: (call: {
          write(m: unknown): boolean;
          end(): void;
          once(e: 'drain', f: () => void): void;
          on(e: 'cancelled', f: () => void): void;
        }) => {
          const cover = Buffer.alloc(64 * 1024, 1);
          let stop = false;
          call.on('cancelled', () => void (stop = true));
          const more = (): void => {
            while (!stop && written < 4000) {
              written++;
              if (!call.write({ id: String(written), cover })) {
                held = true;
                call.once('drain', more);
                return;
              }
            }
            if (!stop) call.end();
          };
          more();
        },
      },
    });
    const frame = Buffer.from([0, 0, 0, 0, 0]);
    const req = http.request(`${h.base}/test.v1.Library/ListBooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto' },
    });
    const res = await new Promise<http.IncomingMessage>((resolve) => {
      req.on('response', resolve);
      req.end(frame);
    });
    res.pause(); // a browser tab that stopped reading
    // Until the handler is held and its writing has come to rest (unchanged over 5 polls), or it
    // wrote everything (what unbounded buffering would let it do).
    let last = -1;
    let still = 0;
    await waitFor(
      'the handler to be held back, or to write everything',
      () => {
        still = written === last ? still + 1 : 0;
        last = written;
        return written >= 4000 || (held && still >= 5);
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const seen = written;
    res.destroy();
    expect(held).toBe(true);
    // 4000 messages of 64 KB would be 256 MB queued; held back, a few MB
    expect(seen).toBeLessThan(400);
  });

  it("shows handlers the request's own metadata, no header of svcboot's, even without middleware", async () => {
    const seen: string[] = [];
    h = await startLibrary('    grpcWeb: { enabled: true }\n', {
      noMiddleware: true,
      overrides: {
        Ping: (
          call: { metadata: { getMap(): Record<string, unknown> } },
          cb: (e: null, r: unknown) => void,
        ) => {
          seen.push(...Object.keys(call.metadata.getMap()));
          cb(null, { text: 'ok' });
        },
      },
    });
    const res = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto' },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    await res.arrayBuffer();
    expect(seen.length).toBeGreaterThan(0);
    // The client's address and protocol reach the call from the adapter, never as a header.
    expect(seen.filter((k) => k.startsWith('x-svc-'))).toEqual([]);
  });

  it('is off by default: a gRPC-Web request is not answered as one', async () => {
    h = await startLibrary();
    const res = await fetch(`${h.base}/test.v1.Library/Ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto' },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    expect(res.headers.get('content-type')).not.toMatch(/grpc-web/);
  });
});
