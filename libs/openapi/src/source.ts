import type protobuf from 'protobufjs';
import type { HttpBinding } from './api/rules.js';
import type { OpenApiRoute, OpenApiSource } from './v2.js';

/**
 * A binding of an RPC as the generator needs it: the rule, the method (`service` is its full
 * name, `api.v1.Greeter`), and a type of the root holding the service (a gateway route has more).
 */
export interface DocumentedRoute {
  binding: HttpBinding;
  method: { service: string; name: string };
  requestType: { root: protobuf.Root };
}

/**
 * What the generator documents, taken from the gateway's own routes (the same rules and
 * descriptors it serves), ordered as protoc-gen-openapiv2 walks them: services, their methods in
 * declaration order, each method's bindings in rule order.
 */
export function sourceFromRoutes(
  routes: readonly DocumentedRoute[],
  services: readonly protobuf.Service[],
  info: OpenApiSource['info'],
): OpenApiSource {
  const documented = [...services];
  const out: Array<OpenApiRoute & { order: [number, number, number] }> = [];
  routes.forEach((route, i) => {
    const service = route.requestType.root.lookupService(route.method.service);
    const method = service.methods[route.method.name];
    if (!method) return;
    method.resolve();
    let si = documented.findIndex((s) => s.fullName === service.fullName);
    if (si < 0) si = documented.push(service) - 1;
    out.push({
      binding: route.binding,
      method,
      order: [si, service.methodsArray.indexOf(method), i],
    });
  });
  out.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2]);
  return {
    routes: out.map(({ binding, method }) => ({ binding, method })),
    services: documented,
    info,
  };
}
