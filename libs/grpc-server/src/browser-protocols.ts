import type http from 'node:http';
import type http2 from 'node:http2';
import type protobuf from 'protobufjs';
import { grpcError } from './errors.js';
import type { MethodInvoker } from './invoker/invoker.js';

/** The package that serves Connect and gRPC-Web: loaded when boot.yaml turns either on. */
export const BROWSER_PROTOCOLS_PACKAGE = '@svcboot/grpc-browser';

/** One protocol's adapter over the method invoker, as the entry's port hands it requests. */
export interface ProtocolAdapter {
  /** Answers an HTTP/1.1 request of its protocol (true), or false when `req` is not one. */
  serve(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Answers an HTTP/2 stream of its protocol (true), or false when it is not one. */
  serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean;
  /** Refuses new requests (shutdown). */
  close(): void;
}

/** What the entry gives gRPC-Web. */
export interface GrpcWebServerOptions {
  /** The largest request message taken: the entry's maxRecvMsgSizeBytes. */
  maxRecvMessageBytes: number;
  /** The largest response message sent: the entry's maxSendMsgSizeBytes (-1: none). */
  maxSendMessageBytes: number;
}

/** What the entry gives Connect. */
export interface ConnectServerOptions {
  /** The entry's method invoker (the RPCs by gRPC path). */
  invoker: MethodInvoker;
  /** The protobufjs root that describes a service's messages (for JSON). */
  rootFor(service: string): protobuf.Root | undefined;
  /** The largest request message (and unary body) taken: the entry's maxRecvMsgSizeBytes. */
  maxMessageBytes: number;
  /** The largest response message sent: the entry's maxSendMsgSizeBytes (-1: none). */
  maxSendMessageBytes?: number;
  /** Whether the REST gateway has a POST binding at this path. */
  gatewayPost(path: string): boolean;
  maxJsonDepth?: number;
}

/** What @svcboot/grpc-browser exports for the entry. */
export interface BrowserProtocols {
  grpcWeb(invoker: MethodInvoker, options: GrpcWebServerOptions): ProtocolAdapter;
  connect(options: ConnectServerOptions): ProtocolAdapter;
}

/** Whether `err` says that `specifier` itself (not a module it imports) cannot be found. */
function notInstalled(err: unknown, specifier: string): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') &&
    typeof e.message === 'string' &&
    e.message.includes(`'${specifier}'`)
  );
}

/**
 * Loads the browser protocols' package for the `key` boot.yaml turned on (`grpcWeb`, `connect`);
 * when it is not installed, fails with SVC_GRPC_PROTOCOL_NOT_INSTALLED naming the package and
 * the command that installs it. The specifier is data, not an import of this package's: the core
 * does not depend on the protocols (they depend on it).
 */
export async function loadBrowserProtocols(
  configPath: string,
  key: string,
  specifier: string = BROWSER_PROTOCOLS_PACKAGE,
): Promise<BrowserProtocols> {
  try {
    return (await import(specifier)) as BrowserProtocols;
  } catch (err) {
    if (notInstalled(err, specifier))
      throw grpcError('SVC_GRPC_PROTOCOL_NOT_INSTALLED', [configPath, key, specifier], {
        cause: err,
      });
    throw err;
  }
}
