import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { CallChain } from '@svcboot/entry-core/internal/middleware/call';
import { rulesFromAnnotations } from '@svcboot/openapi/internal/api/rules';
import type protobuf from 'protobufjs';
import { grpcError } from './errors.js';
import type { GrpcEntryConfig } from './schema.js';
import type { ServiceSet } from './services.js';

/** The package of the REST gateway and the OpenAPI UIs: loaded when boot.yaml needs them. */
export const GATEWAY_PACKAGE = '@svcboot/grpc-gateway';

/** The REST gateway as the entry's port hands it requests (built by @svcboot/grpc-gateway). */
export interface RestGateway {
  /** How many HTTP bindings it serves (the bootstrap log). */
  readonly routeCount: number;
  /** Answers a request of one of its bindings (true), or false when none has it. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** The HTTP methods bound at `pathname` (for 405/501 on a path bound only for others). */
  methodsFor(pathname: string): string[];
  /** Takes a WebSocket upgrade of a bidi-streaming binding (true), or false when none has it. */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Closes the WebSocket calls (shutdown). */
  closeWebSockets(): void;
}

/** A UI mounted at a folder path (`/sw/`): answers the paths under it, 404 included. */
export interface UiMount {
  readonly mountPath: string;
  /** True when the path belongs to this mount (it then answered). */
  serve(pathname: string, res: http.ServerResponse): Promise<boolean>;
}

/** What the entry gives the gateway package at bootstrap. */
export interface GatewayInput {
  /** The entry's config (gwOption, gwMappingFiles, sw, docs, errorModel…). */
  config: GrpcEntryConfig;
  /** `grpc[0]`, for errors and warnings. */
  configPath: string;
  /** The app's name, version and description (the OpenAPI documents' info). */
  app: { name: string; version: string; description: string };
  /** The entry's call chain. */
  chain: CallChain;
  /** The entry's user interceptors (`entry.addInterceptor`): gateway calls go through them too. */
  interceptors: readonly ServerInterceptor[];
  /** The services added. */
  services: ServiceSet;
  /** The protobufjs root that describes a service's messages. */
  rootFor(service: string): protobuf.Root | undefined;
  /** The generated services' root and files, for their buf.validate rules in the documents. */
  typed?: { root: protobuf.Root; files: readonly FileDescriptorProto[] };
  /** Whether gRPC-Web or Connect is on: their CORS preflights reach the chain through the gateway. */
  browserPreflights: boolean;
  warn(message: string): void;
}

/** The gateway and the UIs built for an entry. */
export interface GatewayParts {
  gateway: RestGateway;
  /** Swagger UI (`sw`) and RapiDoc (`docs`), those turned on. */
  uis: UiMount[];
  /** The OpenAPI 2.0 document (JSON text); '' when it could not be built. */
  openApi: string;
  /** The OpenAPI 3.1 document (JSON text); '' when it could not be built. */
  openApiV3: string;
}

/** What @svcboot/grpc-gateway exports for the entry. */
export interface GatewayPackage {
  buildGateway(input: GatewayInput): Promise<GatewayParts>;
}

/**
 * The first boot.yaml key (or the annotation) that needs the gateway package, undefined when
 * nothing does: HTTP rules (`gwMappingFiles`, `(google.api.http)` annotations of an added
 * service, `generateUnboundMethods`), the UIs (`sw`, `docs`, which show the gateway's routes),
 * or gRPC-Web and Connect with `middleware.cors` on (their preflights run the chain through it).
 * The built-in routes (/livez, /readyz, /metrics, the common service) and Koa routes do not.
 */
export function gatewayNeededBy(
  config: GrpcEntryConfig,
  services: Pick<ServiceSet, 'serviceNames'>,
  rootFor: (service: string) => protobuf.Root | undefined,
): string | undefined {
  if (config.gwMappingFiles.length > 0) return 'gwMappingFiles';
  if (config.generateUnboundMethods) return 'generateUnboundMethods';
  if (config.sw.enabled) return 'sw';
  if (config.docs.enabled) return 'docs';
  const cors = (config.middleware as Record<string, { enabled?: boolean } | undefined>)['cors'];
  if (cors?.enabled && config.grpcWeb.enabled) return 'grpcWeb';
  if (cors?.enabled && config.connect.enabled) return 'connect';
  for (const name of services.serviceNames()) {
    const service = rootFor(name)?.lookupService(name);
    if (service && rulesFromAnnotations(service).length > 0) return `(google.api.http) of ${name}`;
  }
  return undefined;
}

/** Whether `err` says that `specifier` itself (not a module it imports) cannot be found. */
export function notInstalled(err: unknown, specifier: string): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') &&
    typeof e.message === 'string' &&
    e.message.includes(`'${specifier}'`)
  );
}

/**
 * Loads the gateway package when something needs it (`neededBy`: the key, or annotation, that
 * does), failing with SVC_GRPC_GATEWAY_NOT_INSTALLED naming it, the package and the command that
 * installs it when the package is missing. When nothing needs it: loaded only with
 * `useIfInstalled` (gRPC-Web or Connect on: their preflights without middleware.cors are answered
 * as a whole entry-grpc answers them) and if it is installed; otherwise not at all, so a gRPC-only
 * start loads none of its modules. The specifier is data, not an import: the core does not depend
 * on the gateway (the gateway depends on the core).
 */
export async function loadGatewayPackage(
  configPath: string,
  neededBy: string | undefined,
  useIfInstalled = false,
  specifier: string = GATEWAY_PACKAGE,
): Promise<GatewayPackage | undefined> {
  if (neededBy === undefined && !useIfInstalled) return undefined;
  try {
    return (await import(specifier)) as GatewayPackage;
  } catch (err) {
    if (!notInstalled(err, specifier)) throw err;
    if (neededBy === undefined) return undefined;
    throw grpcError('SVC_GRPC_GATEWAY_NOT_INSTALLED', [configPath, neededBy, specifier], {
      cause: err,
    });
  }
}

/** Upgrade requests not served: a plain HTTP answer on the socket, as Node gives no response object. */
export function refuseUpgrade(socket: Duplex, status: number, body: string): void {
  const text =
    status === 404 ? 'Not Found' : status === 503 ? 'Service Unavailable' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
