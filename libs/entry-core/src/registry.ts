import type { BaseEntryConfig, Entry, EntryPlugin } from './entry.js';
import { coreError } from './errors.js';

/** A plugin of any kind, as `boot({ plugins })` and the registry hold them. */
export type AnyEntryPlugin = EntryPlugin<BaseEntryConfig, Entry>;
type AnyPlugin = AnyEntryPlugin;

/** Entry kinds by boot.yaml key. Holds definitions (code), never app state. */
export class PluginRegistry {
  private readonly plugins = new Map<string, AnyPlugin>();

  register<C extends BaseEntryConfig, E extends Entry>(plugin: EntryPlugin<C, E>): void {
    const existing = this.plugins.get(plugin.key);
    if (existing === (plugin as unknown as AnyPlugin)) return;
    if (existing) {
      throw coreError('SVC_PLUGIN_DUPLICATE', [
        plugin.key,
        existing.packageName,
        plugin.packageName,
      ]);
    }
    this.plugins.set(plugin.key, plugin as unknown as AnyPlugin);
  }

  get(key: string): AnyPlugin | undefined {
    return this.plugins.get(key);
  }

  keys(): string[] {
    return [...this.plugins.keys()];
  }

  /** A registry with the same kinds, for tests that add their own. */
  fork(): PluginRegistry {
    const copy = new PluginRegistry();
    for (const plugin of this.plugins.values()) copy.register(plugin);
    return copy;
  }

  /** A registry holding exactly `plugins` (after what `this` holds), not shared with any other app. */
  with(plugins: Iterable<AnyPlugin>): PluginRegistry {
    const copy = this.fork();
    for (const plugin of plugins) copy.register(plugin);
    return copy;
  }
}

/**
 * The registry `boot()` uses unless given `registry` or `plugins`. Entry packages register into
 * it when imported, so `import '@svcboot/entry-grpc'` is enough for the usual one-app process.
 */
export const defaultRegistry = new PluginRegistry();

export function registerEntryKind<C extends BaseEntryConfig, E extends Entry>(
  plugin: EntryPlugin<C, E>,
): void {
  defaultRegistry.register(plugin);
}
