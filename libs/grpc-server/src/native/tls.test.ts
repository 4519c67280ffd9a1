/**
 * The node:http2 gRPC server on a TLS HTTP/2 server the caller owns (`attach`), with a client
 * certificate: the handler sees the peer's identity as grpc-js's getAuthContext() gives it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { writeSelfSignedCert } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NativeCall } from './call.js';
import { NativeGrpcServer } from './server.js';
import { dispatchTest, rawUnary, type TestMethod } from './test-support/harness.js';

const seen: NativeCall<TestMethod>[] = [];
const methods = new Map<string, TestMethod>([
  [
    '/t.T/Who',
    {
      requestStream: false,
      responseStream: false,
      run: (call) => {
        seen.push(call);
        const auth = call.authContext;
        call.send(
          Buffer.from(
            `${auth.transportSecurityType}:${auth.sslPeerCertificate?.subject.CN ?? 'none'}`,
          ),
        );
        call.end({ code: 0 });
      },
    },
  ],
]);

const dir = mkdtempSync(path.join(os.tmpdir(), 'native-tls-'));
let server: http2.Http2SecureServer;
let native: NativeGrpcServer<TestMethod>;
let port: number;
let key: Buffer;
let cert: Buffer;

beforeAll(async () => {
  const files = writeSelfSignedCert(dir);
  key = readFileSync(files.key);
  cert = readFileSync(files.cert);
  native = new NativeGrpcServer((p) => methods.get(p), dispatchTest);
  // The certificate is its own CA: the client presents the same one.
  server = http2.createSecureServer({
    ...native.http2Options(),
    key,
    cert,
    ca: cert,
    requestCert: true,
    rejectUnauthorized: true,
    ALPNProtocols: ['h2'],
  });
  native.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await native.shutdown(0);
  await closed;
  rmSync(dir, { recursive: true, force: true });
});

it("gives the handler the client's certificate over mTLS (authContext, as grpc-js's getAuthContext)", async () => {
  const client = new grpc.Client(`localhost:${port}`, grpc.credentials.createSsl(cert, key, cert));
  try {
    const r = await rawUnary(client, '/t.T/Who', Buffer.from('x'));
    expect(r.error).toBeNull();
    expect(r.response?.toString()).toBe('ssl:localhost');
    expect(seen.at(-1)?.authContext.sslPeerCertificate?.subject.CN).toBe('localhost');
  } finally {
    client.close();
  }
});
