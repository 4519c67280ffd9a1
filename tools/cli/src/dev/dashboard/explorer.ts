import { createRequire } from 'node:module';
import path from 'node:path';
import type { DevService } from '../services.js';
import { entryHost, entryPort } from './addresses.js';
import { bootEntries, loadProtos, type MethodDefinitionLike, methodsOf } from './catalog.js';

/*
 * The explorer's proxy: the dashboard page posts a call (service, grpc entry, method path, the
 * request as JSON, metadata) and svc dev makes it to the service's native gRPC port with the
 * service's own @grpc/grpc-js and its protos (proto-loader), so no service needs Connect,
 * gRPC-Web or CORS for dev. The answer goes back as JSON lines, one event each: its headers,
 * each response message (unary: one; server streaming: as they come), then its status and
 * trailers. Unary and server-streaming methods; the metadata (a JWT) is used for this call only,
 * never stored or logged.
 */

export interface ExplorerCall {
  service: string;
  entry: string;
  /** `/chain.v1.Front/GetAccount` */
  method: string;
  /** The request message as JSON (lowerCamelCase names, as the catalog lists them). */
  request: unknown;
  /** Metadata to send: `authorization: Bearer …` and the like. */
  metadata?: Record<string, string>;
  /** Default 30 s. */
  timeoutMs?: number;
}

/** One line of the answer. */
export type ExplorerEvent =
  | { headers: Record<string, string> }
  | { message: unknown }
  | {
      status: { code: number; name: string; details: string };
      trailers: Record<string, string>;
      elapsedMs: number;
    };

/** A call the explorer cannot make, for people (the page shows it; HTTP 400). */
export class ExplorerError extends Error {
  override name = 'ExplorerError';
}

interface GrpcLike {
  Client: new (
    address: string,
    credentials: unknown,
  ) => {
    makeUnaryRequest(
      path: string,
      serialize: (v: unknown) => Buffer,
      deserialize: (b: Buffer) => unknown,
      argument: unknown,
      metadata: unknown,
      options: { deadline: number },
      callback: (err: unknown, value: unknown) => void,
    ): CallLike;
    makeServerStreamRequest(
      path: string,
      serialize: (v: unknown) => Buffer,
      deserialize: (b: Buffer) => unknown,
      argument: unknown,
      metadata: unknown,
      options: { deadline: number },
    ): CallLike;
    close(): void;
  };
  credentials: { createInsecure(): unknown };
  Metadata: new () => MetadataLike;
  status: Record<string, number | string>;
}
interface MetadataLike {
  add(key: string, value: string): void;
  getMap(): Record<string, string | Buffer>;
}
interface CallLike {
  on(event: 'metadata', listener: (m: MetadataLike) => void): CallLike;
  on(event: 'status', listener: (s: StatusLike) => void): CallLike;
  on(event: 'data', listener: (d: unknown) => void): CallLike;
  on(event: 'error', listener: (e: unknown) => void): CallLike;
  cancel(): void;
}
interface StatusLike {
  code: number;
  details: string;
  metadata: MetadataLike;
}

/** What a call resolves to before it is made: the address and the method's definition. */
export interface PreparedCall {
  address: string;
  definition: MethodDefinitionLike;
  grpc: GrpcLike;
}

/** Finds the service, its grpc entry, its port and the method; throws ExplorerError otherwise. */
export function prepareCall(
  services: readonly DevService[],
  call: ExplorerCall,
  env: NodeJS.ProcessEnv,
): PreparedCall {
  const service = services.find((s) => s.name === call.service);
  if (service === undefined)
    throw new ExplorerError(
      `no service "${call.service}" in svc dev (${services.map((s) => s.name).join(', ')})`,
    );
  const entry = bootEntries(service.configFile).find(
    (e) => e.kind === 'grpc' && e.name === call.entry,
  );
  if (entry === undefined)
    throw new ExplorerError(`${service.name}: no grpc entry "${call.entry}" in its boot.yaml`);
  const port = entryPort(entry.options, env);
  if (port === undefined)
    throw new ExplorerError(
      `${service.name}: grpc[${call.entry}].port (${String(entry.options['port'])}) is not a port in svc dev's environment`,
    );
  const loaded = loadProtos(service.dir, entry.options['protos']);
  if ('problem' in loaded) throw new ExplorerError(`${service.name}: ${loaded.problem}`);
  let definition: MethodDefinitionLike | undefined;
  for (const { methods } of methodsOf(loaded.definition))
    for (const [, m] of methods) if (m.path === call.method) definition = m;
  if (definition === undefined)
    throw new ExplorerError(
      `${service.name}: no method ${call.method} in grpc[${call.entry}]'s protos`,
    );
  if (definition.requestStream)
    throw new ExplorerError(
      `${call.method} takes a client stream: the explorer calls unary and server-streaming methods`,
    );
  let grpc: GrpcLike;
  try {
    grpc = createRequire(path.join(service.dir, 'package.json'))('@grpc/grpc-js') as GrpcLike;
  } catch {
    throw new ExplorerError(
      `@grpc/grpc-js is not installed for ${service.dir} (entry-grpc brings it: npm install)`,
    );
  }
  return { address: `${entryHost(entry.options, env)}:${port}`, definition, grpc };
}

/**
 * Makes the call, handing each event to `emit`; resolves after the status. `signal` cancels it
 * (the page went away).
 */
export function runCall(
  prepared: PreparedCall,
  call: ExplorerCall,
  emit: (event: ExplorerEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const { grpc, definition, address } = prepared;
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(call.metadata ?? {})) metadata.add(k.toLowerCase(), v);
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const started = performance.now();
  const deadline = Date.now() + (call.timeoutMs ?? 30_000);
  const names = Object.fromEntries(
    Object.entries(grpc.status).map(([name, code]) => [String(code), name]),
  );
  return new Promise<void>((resolve) => {
    let c: CallLike;
    const args = [
      definition.path,
      definition.requestSerialize,
      definition.responseDeserialize,
      call.request,
      metadata,
      { deadline },
    ] as const;
    if (definition.responseStream) {
      c = client.makeServerStreamRequest(...args);
      c.on('data', (message) => emit({ message }));
      // A stream's error is also its status (below).
      c.on('error', () => undefined);
    } else {
      c = client.makeUnaryRequest(...args, (err, value) => {
        if (err === null || err === undefined) emit({ message: value });
      });
    }
    c.on('metadata', (m) => emit({ headers: plain(m) }));
    c.on('status', (s) => {
      signal.removeEventListener('abort', cancel);
      emit({
        status: { code: s.code, name: names[String(s.code)] ?? String(s.code), details: s.details },
        trailers: plain(s.metadata),
        elapsedMs: Math.round((performance.now() - started) * 10) / 10,
      });
      client.close();
      resolve();
    });
    const cancel = (): void => c.cancel();
    signal.addEventListener('abort', cancel, { once: true });
  });
}

function plain(m: MetadataLike): Record<string, string> {
  return Object.fromEntries(
    Object.entries(m.getMap()).map(([k, v]) => [
      k,
      typeof v === 'string' ? v : `base64:${v.toString('base64')}`,
    ]),
  );
}
