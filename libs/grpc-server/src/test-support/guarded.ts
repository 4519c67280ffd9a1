import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { boot } from '@svcboot/entry-core';
import { callContextOf, grpcEntry } from '../index.js';
import { jsonRecords, libraryClient, type Harness } from './harness.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './library-service.js';

type Cb = (err: null, value: unknown) => void;

/**
 * Boots a grpc entry serving the test Library with `middleware` (YAML text, indented under
 * `middleware:`) beside logging, prom and meta, and `env` for `${VAR}`s. Ping and GetShelf answer
 * with who the guard said the caller is (`callContextOf(call).principal`), and note each call in
 * `handled`.
 */
export async function startGuarded(
  middleware: string,
  env: Record<string, string>,
  handled: string[],
): Promise<Harness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-guarded-'));
  const events = path.join(dir, 'events.log');
  const yaml = `app:
  name: library
logger:
  - name: quiet
    level: error
event:
  - name: records
    encoding: json
    outputPaths: ["${events}"]
grpc:
  - name: lib
    port: 0
    loggerEntry: quiet
    eventEntry: records
    generateUnboundMethods: true
    protos:
      files: ["${libraryProto}"]
      includeDirs: ["${protoDir}"]
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
${middleware}`;
  const app = await boot({ configText: yaml, cwd: dir, argv: [], env: { DOMAIN: 'test', ...env } });
  const entry = grpcEntry(app, 'lib');
  const who = (call: { metadata: Metadata }) => {
    const p = callContextOf(call)?.principal;
    return p ? `${p.by}:${p.subject}:${String(p.claims['role'] ?? '')}` : 'nobody';
  };
  entry.addService(libraryDefinition(), {
    ...libraryImplementation,
    Ping: (call: { metadata: Metadata }, cb: Cb) => {
      handled.push(`Ping ${who(call)}`);
      cb(null, { text: who(call) });
    },
    GetShelf: (call: { metadata: Metadata }, cb: Cb) => {
      handled.push(`GetShelf ${who(call)}`);
      cb(null, { name: who(call) });
    },
  } as typeof libraryImplementation);
  await app.bootstrap();
  const port = entry.port;
  const client = libraryClient(`127.0.0.1:${port}`);
  return {
    app,
    entry,
    port,
    base: `http://127.0.0.1:${port}`,
    client,
    yaml,
    async stop() {
      client.close();
      await app.shutdown('test');
      const records = await jsonRecords(events);
      await rm(dir, { recursive: true, force: true });
      return records;
    },
  };
}

/** `grpc.health.v1.Health/Check` for the whole server (an empty request): the status code. */
export function healthCheck(port: number, metadata = new Metadata()): Promise<number> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      () => Buffer.alloc(0),
      (b: Buffer) => b,
      {},
      metadata,
      (err: ServiceError | null) => {
        client.close();
        resolve(err ? err.code : 0);
      },
    );
  });
}

/** Metadata from plain pairs. */
export function md(pairs: Record<string, string>): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(pairs)) m.set(k, v);
  return m;
}
