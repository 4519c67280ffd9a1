import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { grpcEntry, type GrpcEntry } from '../index.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './library-service.js';

export interface Harness {
  app: App;
  entry: GrpcEntry;
  port: number;
  base: string;
  client: Client & Record<string, (...args: unknown[]) => unknown>;
  /** The boot.yaml text the app was booted with (for `app.reload({ configText })`). */
  yaml: string;
  /** Shuts the app down (flushing records) and returns the JSON records written. */
  stop(): Promise<Array<Record<string, unknown>>>;
}

const MIDDLEWARE = `    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
`;

/**
 * `    server: node\n` when SVC_GRPC_SERVER names the native gRPC server to test (grpc-js or node),
 * so that a test file runs on either: `SVC_GRPC_SERVER=node npx vitest run src/x.test.ts`.
 */
export function serverLine(): string {
  const server = process.env['SVC_GRPC_SERVER'];
  return server ? `    server: ${server}\n` : '';
}

/** Boots a grpc entry serving the test Library on port 0, records as JSON lines in a temp file. */
export async function startLibrary(
  extraYaml = '',
  options: {
    cwd?: string;
    overrides?: Record<string, unknown>;
    setup?: (entry: GrpcEntry) => void;
    /** Leave logging, prom and meta off: the entry's chain is empty. */
    noMiddleware?: boolean;
    /** More `middleware:` keys of the entry, indented by 6 spaces (`      timeout: {…}\n`). */
    middleware?: string;
  } = {},
): Promise<Harness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-grpc-'));
  const events = path.join(dir, 'events.log');
  const yaml = `app:
  name: library
  version: 1.2.3
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: json
    outputPaths: ["${events}"]
grpc:
  - name: lib
    port: 0
    loggerEntry: quiet
    eventEntry: records
    enableReflection: true
    generateUnboundMethods: true
    protos:
      files: ["${libraryProto}"]
      includeDirs: ["${protoDir}"]
${options.noMiddleware ? '' : MIDDLEWARE}${options.middleware ?? ''}    prom: { enabled: true }
    sw: { enabled: true }
    docs: { enabled: true }
${/^ {4}server:/m.test(extraYaml) ? '' : serverLine()}${extraYaml}`;
  const app = await boot({
    configText: yaml,
    cwd: options.cwd ?? dir,
    argv: [],
    env: { ...process.env, DOMAIN: 'test' },
  });
  const entry = grpcEntry(app, 'lib');
  entry.addService(libraryDefinition(), {
    ...libraryImplementation,
    ...(options.overrides ?? {}),
  } as typeof libraryImplementation);
  options.setup?.(entry);
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

/** The JSON records (one per line) written to `file`; none when it does not exist. */
export async function jsonRecords(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A Library client for another port or with other credentials. */
export function libraryClient(
  address: string,
  creds = credentials.createInsecure(),
): Harness['client'] {
  const pkg = loadPackageDefinition(
    loadSync(libraryProto, {
      includeDirs: [protoDir],
      longs: String,
      enums: String,
      defaults: true,
    }),
  ) as unknown as {
    test: {
      v1: {
        Library: new (
          addr: string,
          creds: ReturnType<typeof credentials.createInsecure>,
          options?: Record<string, unknown>,
        ) => Harness['client'];
      };
    };
  };
  return new pkg.test.v1.Library(address, creds, { 'grpc.use_local_subchannel_pool': 1 });
}

/** One unary call: resolves the response, initial metadata and status (or the error). */
export function unary(
  client: Harness['client'],
  method: string,
  request: unknown,
  metadata = new Metadata(),
): Promise<{ response?: Record<string, unknown>; headers: Metadata; error?: ServiceError }> {
  return new Promise((resolve) => {
    let headers = new Metadata();
    const call = client[method]!(
      request,
      metadata,
      (error: ServiceError | null, response: Record<string, unknown>) => {
        resolve({ response, headers, error: error ?? undefined });
      },
    ) as { on(ev: 'metadata', f: (md: Metadata) => void): void };
    call.on('metadata', (md) => {
      headers = md;
    });
  });
}
