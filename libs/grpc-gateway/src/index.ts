/**
 * @svcboot/grpc-gateway: the grpc entry's REST gateway (grpc-gateway's HttpRule mapping over the
 * entry's method invoker: routing, JSON bodies and queries, SSE, WebSocket, uploads) and its
 * OpenAPI UIs (Swagger UI at `sw`, RapiDoc at `docs`). @svcboot/grpc-server loads it at bootstrap
 * when boot.yaml needs it, and fails naming it (SVC_GRPC_GATEWAY_NOT_INSTALLED) when boot.yaml needs
 * it and it is not. Apps install @svcboot/entry-grpc, which brings it.
 */
import type { GatewayPackage } from '@svcboot/grpc-server/protocol';
import { buildGateway as build } from './build.js';

/** What @svcboot/grpc-server calls at bootstrap (GatewayPackage). */
export const buildGateway: GatewayPackage['buildGateway'] = (input) => build(input);

export { compileTemplate, type PathTemplate } from './template.js';
export type { HttpBinding } from '@svcboot/openapi';
