import type { PortingRule } from '../config/porting.js';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * rk-db's `database[].plugins` (gorm plugins, e.g. `prom`): Go-only. A plugins map whose every
 * plugin is off is dropped silently, as rk-db does nothing with it either.
 */
export const gormPluginsRule: PortingRule = {
  path: 'database.*.plugins',
  action: 'refuse',
  code: 'SVC_PORTING_GO_ONLY',
  when: (v) => !isMap(v) || Object.values(v).some((p) => !isMap(p) || p['enabled'] !== false),
  why: 'gorm plugins (database[].plugins, e.g. prom) are Go-only: svcboot has no gorm',
  instead:
    "remove plugins; the connector's statements are timed in its records and logger.slowThresholdMs",
};

/** The same map with every plugin off: nothing to do. */
export const gormPluginsOffRule: PortingRule = {
  path: 'database.*.plugins',
  action: 'normalise',
  when: (v) => isMap(v) && Object.values(v).every((p) => isMap(p) && p['enabled'] === false),
  map: () => undefined,
  why: 'every plugin is off',
};
