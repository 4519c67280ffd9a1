import type { PortingRule } from '@svcboot/entry-core/toolkit';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** rk-cache's options as svcboot's (docs/porting-from-rk-boot.md, "cache"). */
export const cachePortingRules: readonly PortingRule[] = [
  {
    path: 'kvstore',
    action: 'normalise',
    when: (v) => isMap(v) && v['addrs'] === undefined,
    map: (v) => ({ ...(v as Record<string, unknown>), addrs: ['localhost:6379'] }),
    why: "rk-cache's Redis tier connects to localhost:6379 when it names no address",
  },
];
