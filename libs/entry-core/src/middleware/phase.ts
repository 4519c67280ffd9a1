/**
 * The phases of a call's chain, in the order their `before`s run (their `after`s run in reverse).
 * A middleware places itself in one by what it does, never by a number or by naming a package:
 * core knows the concepts, not the middlewares (ARCHITECTURE.md §5).
 */
export const MIDDLEWARE_PHASES = [
  /** What every answer carries, refused or not: the request id and the app's identity headers (meta). */
  'edge',
  /** Watching the call before anything may refuse it: metrics, spans, the record (prom, trace, logging). */
  'observe',
  /** Whether the process can take the call at all, once it is recorded (load shedding). */
  'admit',
  /** Headers a browser reads, set before any guard so that rejections carry them (secure, CORS). */
  'browser',
  /** Who calls: a guard that verifies credentials and sets the principal (auth, JWT). */
  'authn',
  /** Whether that caller may make this request (CSRF). */
  'authz',
  /** How much a caller may: limits keyed on the principal (rate limit), a client's breaker. */
  'limit',
  /** When the call must be answered by (timeout). */
  'deadline',
  /** Right before the handler: checks of the request message itself (validate). */
  'handler',
] as const;

/** A phase of the chain (`MIDDLEWARE_PHASES`). */
export type MiddlewarePhase = (typeof MIDDLEWARE_PHASES)[number];

/**
 * Where a middleware stands in the chain: its phase, and optionally before or after another
 * middleware of the same phase, by that one's key (`middleware.<key>`: `prom`, `logging`, `auth`,
 * …). A key that is not in the chain, or in another phase, is ignored. Otherwise, within a phase:
 * the built-ins (meta, prom, logging), then the registry's definitions in their list's order, then
 * the middlewares an app added, in the order added.
 */
export interface MiddlewarePlacement {
  /** The phase it runs in. */
  readonly phase: MiddlewarePhase;
  /** The key of a middleware of the same phase whose `before` this one's precedes. */
  readonly before?: string;
  /** The key of a middleware of the same phase whose `before` this one's follows. */
  readonly after?: string;
}

/** A phase alone, or a placement. */
export type MiddlewarePlace = MiddlewarePhase | MiddlewarePlacement;

/** The placement of a phase or placement. */
export function placementOf(place: MiddlewarePlace): MiddlewarePlacement {
  return typeof place === 'string' ? { phase: place } : place;
}

const PHASE_INDEX: ReadonlyMap<string, number> = new Map(MIDDLEWARE_PHASES.map((p, i) => [p, i]));

/** One middleware to place: its key (undefined: added by the app) and its placement. */
export interface Placeable {
  readonly key: string | undefined;
  readonly placement: MiddlewarePlacement;
}

/**
 * `items` in chain order: by phase, then within a phase by the `before`/`after` of its items, else
 * as listed. Throws naming the keys when the items of a phase ask for a cycle, or when a phase is
 * not one of `MIDDLEWARE_PHASES`.
 */
export function placeInPhases<T extends Placeable>(items: readonly T[]): T[] {
  const byPhase: T[][] = MIDDLEWARE_PHASES.map(() => []);
  for (const item of items) {
    const i = PHASE_INDEX.get(item.placement.phase);
    if (i === undefined)
      throw new Error(
        `middleware ${item.key ?? '(added)'}: unknown phase "${item.placement.phase}"; one of ${MIDDLEWARE_PHASES.join(', ')}`,
      );
    byPhase[i]!.push(item);
  }
  return byPhase.flatMap((phase) => orderWithin(phase));
}

/** A phase's items: a topological order of their before/after, ties kept in list order. */
function orderWithin<T extends Placeable>(items: readonly T[]): T[] {
  if (items.every((m) => m.placement.before === undefined && m.placement.after === undefined))
    return [...items];
  const indexOf = new Map<string, number>();
  items.forEach((m, i) => {
    if (m.key !== undefined) indexOf.set(m.key, i);
  });
  // next[a] holds b when a's `before` must run first; waiting[b] counts what b waits for.
  const next: number[][] = items.map(() => []);
  const waiting = items.map(() => 0);
  const edge = (a: number | undefined, b: number | undefined) => {
    if (a === undefined || b === undefined || a === b) return;
    next[a]!.push(b);
    waiting[b]!++;
  };
  items.forEach((m, i) => {
    const { before, after } = m.placement;
    if (before !== undefined) edge(i, indexOf.get(before));
    if (after !== undefined) edge(indexOf.get(after), i);
  });
  const out: T[] = [];
  const done = items.map(() => false);
  for (let n = 0; n < items.length; n++) {
    const i = waiting.findIndex((w, k) => w === 0 && !done[k]);
    if (i < 0) {
      const stuck = items.filter((_, k) => !done[k]).map((m) => m.key ?? '(added)');
      throw new Error(
        `middleware placement: ${stuck.join(', ')} (phase "${items[0]!.placement.phase}") ask to run before and after each other; change one's before/after`,
      );
    }
    done[i] = true;
    out.push(items[i]!);
    for (const b of next[i]!) waiting[b]!--;
  }
  return out;
}
