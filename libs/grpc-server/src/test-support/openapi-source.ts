import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type protobuf from 'protobufjs';
import { loadProtoRoot, rulesFromAnnotations, type OpenApiSource } from '@svcboot/openapi';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The test protos: src/test-support/protos (with the vendored openapiv2 options protos). */
export const PROTOS = path.resolve(here, 'protos');

/** The services of `files` (relative to PROTOS) and their `(google.api.http)` bindings, as the entry documents them. */
export function sourceOf(
  files: readonly string[],
  services: readonly string[],
  info: OpenApiSource['info'] = { title: 't', version: '1' },
): OpenApiSource {
  const root = loadProtoRoot(files, [PROTOS], PROTOS);
  const svcs: protobuf.Service[] = services.map((s) => root.lookupService(s));
  const routes: Array<OpenApiSource['routes'][number]> = [];
  for (const svc of svcs) {
    for (const b of rulesFromAnnotations(svc)) {
      const method = svc.methods[b.selector.slice(b.selector.lastIndexOf('.') + 1)]!;
      method.resolve();
      routes.push({ binding: b, method });
    }
  }
  return { routes, services: svcs, info };
}
