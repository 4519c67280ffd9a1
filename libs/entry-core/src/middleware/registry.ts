import type { AnyMiddlewareDefinition } from './definition.js';

/** The built-in middlewares' keys, assembled by `buildCallChain` itself: no definition may take them. */
const BUILTIN_KEYS = new Set(['logging', 'prom', 'meta']);

/**
 * The middleware kinds one app knows, by their key under `middleware:` (ARCHITECTURE.md §9), as
 * the PluginRegistry holds its entry kinds: `boot()` reads `middlewareSchema` and builds each
 * entry's chain from the app's registry, so apps with different middlewares can share a process.
 * `defaultMiddlewareRegistry` holds svcboot's; `boot({ middlewares })` gives an app that plus its
 * own.
 */
export class MiddlewareRegistry {
  private readonly defs = new Map<string, AnyMiddlewareDefinition>();
  private changes = 0;

  constructor(definitions: Iterable<AnyMiddlewareDefinition> = []) {
    for (const d of definitions) this.register(d);
  }

  /**
   * Makes a middleware configurable as `middleware.<key>`. Once per key: another definition
   * under a taken key (or a built-in's key) throws.
   */
  register(def: AnyMiddlewareDefinition): void {
    const existing = this.defs.get(def.key);
    if (existing === def) return;
    if (existing !== undefined || BUILTIN_KEYS.has(def.key))
      throw new Error(
        `middleware "${def.key}" is defined twice: a key under middleware: names one middleware; rename the new one`,
      );
    this.defs.set(def.key, def);
    this.changes++;
  }

  /** The definition under `key`, if any. */
  get(key: string): AnyMiddlewareDefinition | undefined {
    return this.defs.get(key);
  }

  /** Every definition, in the order registered (svcboot's first). */
  list(): readonly AnyMiddlewareDefinition[] {
    return [...this.defs.values()];
  }

  /** Changes whenever a definition is registered (schemas built from the list are cached by it). */
  get version(): number {
    return this.changes;
  }

  /** A registry with these definitions and `more` (this one unchanged). */
  with(more: Iterable<AnyMiddlewareDefinition>): MiddlewareRegistry {
    const copy = new MiddlewareRegistry(this.defs.values());
    for (const d of more) copy.register(d);
    return copy;
  }
}

let parsing: MiddlewareRegistry | undefined;

/**
 * Runs `fn` (a synchronous parse of boot.yaml) with `registry` as the one `middlewareSchema` reads:
 * how `boot()` validates `middleware.*` against the app's own registry.
 */
export function withMiddlewareRegistry<R>(registry: MiddlewareRegistry, fn: () => R): R {
  const before = parsing;
  parsing = registry;
  try {
    return fn();
  } finally {
    parsing = before;
  }
}

/** The registry a parse reads now: the app's during `boot()`, else `fallback`. @internal */
export function parsingRegistry(fallback: MiddlewareRegistry): MiddlewareRegistry {
  return parsing ?? fallback;
}
