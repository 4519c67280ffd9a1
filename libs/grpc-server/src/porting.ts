import { serverPortingRules } from '@svcboot/entry-core/internal/config/porting-rules';
import type { PortingRule } from '@svcboot/entry-core/internal/config/porting';

/**
 * rk-grpc's options that svcboot spells or places differently, or refuses
 * (docs/porting-from-rk-boot.md, "grpc").
 */
export const grpcPortingRules: readonly PortingRule[] = [
  ...serverPortingRules,
  {
    path: 'certEntry',
    action: 'move',
    to: 'tls.certEntry',
    why: 'svcboot keeps the TLS options together under tls',
  },
  {
    path: 'gwPort',
    action: 'normalise',
    when: (v, item) => v === item['port'] || v === 0,
    map: () => undefined,
    why: 'the gateway on the gRPC port is what svcboot does anyway',
  },
  {
    // In the rk-boot porting mode gwPort stays: the entry listens on it as well (gw-port.ts).
    path: 'gwPort',
    action: 'refuse',
    mode: 'strict',
    code: 'SVC_PORTING_ONE_PORT',
    why: 'svcboot serves gRPC, the gateway, the UIs and the built-in routes on one port (port), told apart per request; a second port is kept only in the porting mode (app.porting: rk-boot)',
    instead: 'remove gwPort and call the gateway on port, or set app.porting: rk-boot',
  },
  {
    path: 'middleware.gzip',
    action: 'rkIgnored',
    why: 'rk-grpc has no gzip middleware (its templates list one) and ignores the key',
    instead: 'use compression for gateway responses and grpcCompression for gRPC messages',
  },
  {
    path: 'grpcWeb.cors',
    action: 'ignore',
    when: (v) => {
      const origins = (v as { allowOrigins?: unknown } | null)?.allowOrigins;
      return !Array.isArray(origins) || origins.every((o) => o === '');
    },
    why: "with no allowOrigins rk-grpc lets every origin call gRPC-Web; svcboot's CORS, gRPC-Web's included, is middleware.cors",
    instead: 'turn on middleware.cors to let browsers of other origins call',
  },
  {
    path: 'grpcWeb.cors',
    action: 'refuse',
    why: "svcboot's CORS, gRPC-Web's preflights included, is middleware.cors",
    instead:
      'move the origins to middleware.cors.allowOrigins (with middleware.cors.enabled: true)',
  },
  {
    path: 'grpcWeb.websocket',
    action: 'refuse',
    offIsNoop: true,
    why: "gRPC-Web over WebSocket (improbable-eng's transport) is not served: svcboot serves gRPC-Web over HTTP/1.1, binary and text",
    instead: 'remove it; browsers use the HTTP transport (grpc-web, connect-web)',
  },
  {
    path: 'proxy',
    action: 'refuse',
    code: 'SVC_PORTING_GO_ONLY',
    offIsNoop: true,
    why: "rk-grpc's proxy (forwarding unknown gRPC methods by header, path or IP) is Go-only",
    instead: 'put a proxy such as Envoy in front, or remove it',
  },
  {
    path: 'sw.jsonPath',
    action: 'rkIgnored',
    why: "rk-boot reads sw.jsonPaths (plural); its templates' jsonPath is ignored",
    instead: 'remove it: svcboot generates the OpenAPI document from the protos',
  },
  {
    path: 'sw.jsonPaths',
    action: 'ignore',
    why: 'svcboot generates the OpenAPI document from the protos (protos.files or protos.descriptorSets) instead of reading protoc-gen-openapiv2 output',
  },
  {
    path: 'docs.specPath',
    action: 'rkIgnored',
    why: "rk-boot reads docs.specPaths (plural); its templates' specPath is ignored",
    instead: 'remove it: svcboot generates the document from the protos',
  },
  {
    path: 'docs.specPaths',
    action: 'ignore',
    why: 'svcboot generates the OpenAPI document from the protos',
  },
  {
    path: 'docs.debug',
    action: 'ignore',
    why: "svcboot's RapiDoc page has no debug mode",
  },
  {
    path: 'static.sourceType',
    action: 'refuse',
    code: 'SVC_PORTING_GO_ONLY',
    when: (v) => v === 'embed' || v === 'pkger',
    why: 'embed.FS and pkger sources are Go-only',
    instead: 'use sourceType: local with sourcePath a folder on disk',
  },
];
