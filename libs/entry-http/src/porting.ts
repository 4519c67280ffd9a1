import {
  gzipPortingRules,
  serverPortingRules,
} from '@svcboot/entry-core/internal/config/porting-rules';
import type { PortingRule } from '@svcboot/entry-core/internal/config/porting';

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
    path: 'sw.jsonPath',
    action: 'rkIgnored',
    why: "rk-boot reads sw.jsonPaths (plural); its templates' jsonPath is ignored",
    instead: 'write sw.jsonPaths',
  },
  {
    path: 'docs.specPath',
    action: 'rkIgnored',
    why: "rk-boot reads docs.specPaths (plural); its templates' specPath is ignored",
    instead: 'write docs.specPaths',
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
