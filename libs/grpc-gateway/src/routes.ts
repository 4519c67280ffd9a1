import { errorMessage } from '@svcboot/entry-core/toolkit';
import type protobuf from 'protobufjs';
import type { GatewayOptions } from './options.js';
import { buildRoute, unboundBinding, type GatewayRoute } from './route.js';
import { rulesFromAnnotations, rulesFromMappingFile, type HttpBinding } from '@svcboot/openapi';
import { grpcError } from '@svcboot/grpc-server/protocol';
import type { ServiceSet } from '@svcboot/grpc-server/protocol';

export interface RouteInput {
  /** The entry's added services. */
  services: ServiceSet;
  /** The root that holds a service's descriptors, undefined when none does. */
  rootFor(service: string): protobuf.Root | undefined;
  /** `gwMappingFiles`, as paths readable from the working folder. */
  gwMappingFiles: readonly string[];
  generateUnboundMethods: boolean;
  options: Pick<GatewayOptions, 'allowPatchFeature'>;
  /** `grpc[0]`, for errors. */
  configPath: string;
  warn(message: string): void;
}

export interface Routes {
  /** The gateway's routes: mapping-file rules, then annotations, then unbound methods. */
  routes: GatewayRoute[];
  /** The added services found in the descriptors, in the order they were added (the OpenAPI tags). */
  documented: protobuf.Service[];
}

/**
 * The HTTP routes of an entry's added services, from its gwMappingFiles and the services'
 * `google.api.http` annotations: what the gateway serves and the OpenAPI documents describe.
 */
export async function routesOf(input: RouteInput): Promise<Routes> {
  const { services, rootFor, configPath } = input;
  const bindings: HttpBinding[] = [];
  for (const file of input.gwMappingFiles) {
    try {
      bindings.push(...(await rulesFromMappingFile(file)));
    } catch (err) {
      throw grpcError('SVC_GRPC_MAPPING_FILE', [configPath, errorMessage(err)], { cause: err });
    }
  }
  const documented: protobuf.Service[] = [];
  for (const service of services.serviceNames()) {
    const r = rootFor(service);
    if (!r) continue;
    const svc = r.lookupService(service);
    documented.push(svc);
    bindings.push(...rulesFromAnnotations(svc));
  }
  const routes: GatewayRoute[] = [];
  const bound = new Set<string>();
  for (const b of bindings) {
    const method = services.bySelector(b.selector);
    if (!method) {
      input.warn(`${b.source}: no added service has ${b.selector}; its HTTP rule is skipped`);
      continue;
    }
    const r = rootFor(method.service);
    if (!r) throw grpcError('SVC_GRPC_NO_DESCRIPTOR', [configPath, method.service]);
    routes.push(buildRoute(b, method, r, input.options));
    bound.add(method.path);
  }
  if (input.generateUnboundMethods) {
    for (const method of services.methods.values()) {
      if (bound.has(method.path) || method.definition.requestStream) continue;
      const r = rootFor(method.service);
      if (r) routes.push(buildRoute(unboundBinding(method), method, r, input.options));
    }
  }
  return { routes, documented };
}

/**
 * For gRPC-Web (`grpcWeb.enabled`): a route per unary or server-streaming method at its gRPC path
 * (`/<pkg>.<Service>/<Method>`), used only to run a browser's CORS preflight to that path through
 * the middleware chain (Gateway#addWebPreflight); never served as a REST call.
 */
export function webPreflightRoutes(
  input: Pick<RouteInput, 'services' | 'rootFor' | 'options'>,
): GatewayRoute[] {
  const routes: GatewayRoute[] = [];
  for (const method of input.services.methods.values()) {
    if (method.definition.requestStream) continue;
    const r = input.rootFor(method.service);
    if (r) routes.push(buildRoute(unboundBinding(method), method, r, input.options));
  }
  return routes;
}
