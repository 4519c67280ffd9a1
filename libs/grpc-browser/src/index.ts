/**
 * @svcboot/grpc-browser: the browser protocols of the `grpc` entry, Connect (connect-es,
 * connect-go, buf curl; JSON and proto, unary and streaming) and gRPC-Web, as adapters over the
 * entry's method invoker. The entry (@svcboot/grpc-server) loads this package when boot.yaml
 * turns `grpcWeb` or `connect` on; an app does not import it. @svcboot/entry-grpc depends on it.
 */
import type {
  BrowserProtocols,
  ConnectServerOptions,
  GrpcWebServerOptions,
  MethodInvoker,
  ProtocolAdapter,
} from '@svcboot/grpc-server/protocol';
import { ConnectAdapter } from './connect/adapter.js';
import { GrpcWebAdapter } from './grpc-web.js';

/** gRPC-Web over the entry's method invoker. */
export const grpcWeb: BrowserProtocols['grpcWeb'] = (
  invoker: MethodInvoker,
  options: GrpcWebServerOptions,
): ProtocolAdapter => new GrpcWebAdapter(invoker, options);

/** Connect over the entry's method invoker. */
export const connect: BrowserProtocols['connect'] = (
  options: ConnectServerOptions,
): ProtocolAdapter => new ConnectAdapter(options);
