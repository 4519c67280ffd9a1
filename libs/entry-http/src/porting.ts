import { gzipPortingRules, serverPortingRules, type PortingRule } from '@svcboot/entry-core';

/**
 * rk-gin's options that svcboot spells or places differently, or refuses
 * (docs/porting-from-rk-boot.md, "httpserver (gin)").
 */
export const httpPortingRules: readonly PortingRule[] = [
  ...serverPortingRules,
  ...gzipPortingRules,
  {
    path: 'certEntry',
    action: 'normalise',
    when: (v) => v === '',
    map: () => undefined,
    why: 'no certificate is no TLS',
  },
  {
    path: 'certEntry',
    action: 'refuse',
    why: 'an httpserver entry serves plain HTTP; it has no TLS of its own',
    instead:
      'terminate TLS in front of it (a proxy or the load balancer), or serve the API from a grpc entry with tls.certEntry',
  },
  {
    path: 'sw',
    action: 'refuse',
    offIsNoop: true,
    why: 'an httpserver entry has no Swagger UI: svcboot serves the UIs from a grpc entry, with the document it generates from the protos',
    instead:
      'serve your swagger.json with static (static.enabled, sourcePath), or move the API to a grpc entry with sw.enabled',
  },
  {
    path: 'docs',
    action: 'refuse',
    offIsNoop: true,
    why: 'an httpserver entry has no RapiDoc page: svcboot serves the UIs from a grpc entry',
    instead: 'serve your spec with static, or move the API to a grpc entry with docs.enabled',
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
