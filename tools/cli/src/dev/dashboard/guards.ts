/*
 * Which of a grpc entry's middleware a method goes through: every enabled one (boot.yaml's
 * `middleware:` section) unless its `ignore` list (plus the section's own `ignore`, which every
 * middleware adds to its list) names the method. Patterns are matched as entry-core's
 * `matchesCall` matches them (middleware/definition.ts): equal to the operation or path, a
 * prefix ending in `/`, or a glob (`*` within a segment, `**` across). rateLimit's and timeout's
 * `paths` give some calls their own limit.
 */

/** One enabled middleware of the entry, as it treats one method. */
export interface MethodGuard {
  middleware: string;
  /** False when its ignore list names the method's gRPC path. */
  applies: boolean;
  /** For people: the pattern that skips it, REST routes it skips, or the method's own rate limit. */
  note: string | undefined;
}

type Options = Record<string, unknown>;

/**
 * How each enabled middleware of `middleware` (the boot.yaml section) treats a method: its gRPC
 * full path and its REST routes (templates such as `/v1/accounts/{id}`, matched as a path of
 * that shape).
 */
export function guardsOf(
  middleware: unknown,
  enabled: readonly string[],
  grpcPath: string,
  rest: ReadonlyArray<{ verb: string; path: string }>,
): MethodGuard[] {
  const section = (middleware ?? {}) as Options;
  const shared = stringsOf(section['ignore']);
  return enabled.map((name) => {
    const options = (section[name] ?? {}) as Options;
    const ignore = [...shared, ...stringsOf(options['ignore'])];
    const skippedBy = ignore.find((p) => matchesPath(p, grpcPath));
    if (skippedBy !== undefined)
      return { middleware: name, applies: false, note: `ignore: ${skippedBy}` };
    const notes: string[] = [];
    const skippedRoutes = rest.filter((r) =>
      ignore.some((p) => p === `${r.verb} ${r.path}` || matchesPath(p, r.path)),
    );
    if (skippedRoutes.length > 0)
      notes.push(`not on ${skippedRoutes.map((r) => `${r.verb} ${r.path}`).join(', ')}`);
    const own = ownLimit(name, options['paths'], grpcPath);
    if (own !== undefined) notes.push(own);
    return {
      middleware: name,
      applies: true,
      note: notes.length === 0 ? undefined : notes.join('; '),
    };
  });
}

/**
 * rateLimit's and timeout's own limit for the method: the first `paths` item naming it (as they
 * pick it), as `5/s (paths: /pkg.Svc/*)` or `500 ms (paths: …)`.
 */
function ownLimit(middleware: string, paths: unknown, grpcPath: string): string | undefined {
  const unit =
    middleware === 'rateLimit'
      ? (p: Options) => `${String(p['reqPerSec'])}/s`
      : middleware === 'timeout'
        ? (p: Options) => `${String(p['timeoutMs'])} ms`
        : undefined;
  if (unit === undefined) return undefined;
  for (const item of Array.isArray(paths) ? paths : []) {
    const p = (item ?? {}) as Options;
    if (typeof p['path'] === 'string' && matchesPath(p['path'], grpcPath))
      return `${unit(p)} (paths: ${p['path']})`;
  }
  return undefined;
}

function stringsOf(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/** entry-core's path match: a glob, a prefix ending in `/`, or the path itself. */
export function matchesPath(pattern: string, path: string): boolean {
  if (pattern.includes('*')) return globOf(pattern).test(path);
  return pattern.endsWith('/') ? path.startsWith(pattern) : path === pattern;
}

function globOf(pattern: string): RegExp {
  const body = pattern
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*'),
    )
    .join('.*');
  return new RegExp(`^${body}$`);
}
