import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceError } from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry, type GrpcEntry } from './index.js';
import { libraryClient } from './test-support/harness.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './test-support/library-service.js';

// Issue 45 point 3: rk-grpc's example/boot/simple/boot.yaml (tools/porting's fixture, neutral
// renames) in the porting mode: gRPC on port, the gateway, UIs and built-in routes on gwPort too.
// The fixture's ports are made free ones; protos.files (for the gateway's rules) and
// maxConnections (to show the limit is shared) are added.

const fixture = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../tools/porting/fixtures/rk-grpc--simple.yaml',
);

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

let app: App;
let entry: GrpcEntry;
let gwPort: number;

beforeAll(async () => {
  gwPort = await freePort();
  const text = readFileSync(fixture, 'utf8')
    .replace(/port: 8080\b/, 'port: 0')
    .replace(/gwPort: 8081\b/, `gwPort: ${gwPort}`)
    .replace(
      /(\n {4}enabled: true[^\n]*\n)/,
      `$1    maxConnections: 2\n    protos:\n      files: ["${libraryProto}"]\n      includeDirs: ["${protoDir}"]\n`,
    );
  expect(text).toContain(`gwPort: ${gwPort}`);
  app = await boot({
    configText: `app:\n  name: greeter\n  porting: rk-boot\nlogger:\n  - name: quiet\n    level: error\n${text}`,
    argv: [],
    env: { ...process.env },
  });
  entry = grpcEntry(app, 'greeter');
  entry.addService(libraryDefinition(), libraryImplementation);
  await app.bootstrap();
});

afterAll(async () => {
  await app?.shutdown('test');
});

/** One HTTP/1.1 GET on its own connection (no agent), status and body. */
function get(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('gwPort in the rk-boot porting mode', () => {
  it('serves gRPC on port, and the gateway, the UIs and the built-in routes on gwPort as on port', async () => {
    expect(entry.port).not.toBe(gwPort);
    const client = libraryClient(`127.0.0.1:${entry.port}`);
    try {
      const shelf = await new Promise<{ name: string }>((resolve, reject) =>
        client['GetShelf']!(
          { name: 'shelves/1' },
          (err: ServiceError | null, res: { name: string }) => (err ? reject(err) : resolve(res)),
        ),
      );
      expect(shelf.name).toBe('shelves/1');
    } finally {
      client.close();
    }
    for (const port of [gwPort, entry.port]) {
      const shelf = await get(port, '/v1/shelves/7');
      expect([port, shelf.status], shelf.body).toEqual([port, 200]);
      expect(JSON.parse(shelf.body)).toMatchObject({ name: 'shelves/7' });
      expect((await get(port, '/livez')).status, `${port} /livez`).toBe(200);
      expect((await get(port, '/sw/')).status, `${port} /sw/`).toBe(200);
      expect((await get(port, '/docs/')).status, `${port} /docs/`).toBe(200);
      expect((await get(port, '/metrics')).body, `${port} /metrics`).toContain(
        'grpc_server_handled_total',
      );
    }
  });

  it('the bootstrap record names both ports', () => {
    expect(entry.bootstrapPayloads()).toMatchObject({ grpcPort: entry.port, gwPort });
  });

  it('shares maxConnections with port: past it, a connection to gwPort gets health answers only', async () => {
    // Two keep-alive connections to port fill the limit (2).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const held = (): Promise<number> =>
        new Promise((resolve, reject) =>
          http
            .get({ host: '127.0.0.1', port: entry.port, path: '/livez', agent }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            })
            .on('error', reject),
        );
      expect(await Promise.all([held(), held()])).toEqual([200, 200]);
      const over = await get(gwPort, '/v1/shelves/7');
      expect(over.status).toBe(503);
      expect(over.body).toContain('too many connections');
      expect((await get(gwPort, '/livez')).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('stops accepting on gwPort with port at shutdown', async () => {
    await app.shutdown('test');
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(gwPort, '127.0.0.1');
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
