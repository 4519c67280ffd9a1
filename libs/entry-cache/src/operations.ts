import { errorMessage } from '@svcboot/entry-core/toolkit';
import type { LocalTier } from './local-tier.js';
import { cacheError } from './errors.js';
import { deserialize, serialize } from './serialize.js';

/** The commands the remote tier uses; ioredis's Redis and Cluster clients both have them. */
export interface RemoteCommands {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
  del(key: string): Promise<number>;
}

export interface RemoteTier {
  commands: RemoteCommands;
  /** Remote keys are `<prefix><key>`, so two cache entries on one Redis do not collide. */
  prefix: string;
  ttlMs: number;
}

export interface GetResult<T> {
  /** True when a tier had the key. */
  success: boolean;
  value: T | undefined;
  /** Set when the lookup failed (including a miss while the remote tier is unreachable). */
  error: Error | undefined;
}

export interface AddResult {
  success: boolean;
  error: Error | undefined;
}

/** The read and write paths over the tiers that are enabled. Nothing here throws. */
export class CacheOperations {
  private readonly inFlight = new Map<string, Promise<GetResult<unknown>>>();

  constructor(
    private readonly local: LocalTier | undefined,
    private readonly remote: RemoteTier | undefined,
    private readonly describe: (err: unknown) => Error,
  ) {}

  /** Local first, then remote (back-filling local on a remote hit). */
  async getFromCache<T = unknown>(request: { key: string }): Promise<GetResult<T>> {
    const { key } = request;
    const localText = this.local?.get(key);
    if (localText !== undefined)
      return { success: true, value: deserialize<T>(localText), error: undefined };
    if (!this.remote) return { success: false, value: undefined, error: undefined };
    let text: string | null;
    try {
      text = await this.remote.commands.get(this.remote.prefix + key);
    } catch (err) {
      return { success: false, value: undefined, error: this.describe(err) };
    }
    if (text === null) return { success: false, value: undefined, error: undefined };
    let value: T;
    try {
      value = deserialize<T>(text);
    } catch {
      return {
        success: false,
        value: undefined,
        error: cacheError('SVC_CACHE_REMOTE_NOT_JSON', [key]),
      };
    }
    this.local?.set(key, text);
    return { success: true, value, error: undefined };
  }

  /** Writes both tiers; the local write stands even when the remote one fails (reported in `error`). */
  async addToCache(request: { key: string; value: unknown }): Promise<AddResult> {
    let text: string;
    try {
      text = serialize(request.key, request.value);
    } catch (err) {
      return { success: false, error: err as Error };
    }
    this.local?.set(request.key, text);
    if (!this.remote) return { success: true, error: undefined };
    try {
      await this.remote.commands.set(
        this.remote.prefix + request.key,
        text,
        'PX',
        this.remote.ttlMs,
      );
      return { success: true, error: undefined };
    } catch (err) {
      return { success: false, error: this.describe(err) };
    }
  }

  /** Removes the key from both tiers. */
  async delete(key: string): Promise<AddResult> {
    this.local?.delete(key);
    if (!this.remote) return { success: true, error: undefined };
    try {
      await this.remote.commands.del(this.remote.prefix + key);
      return { success: true, error: undefined };
    } catch (err) {
      return { success: false, error: this.describe(err) };
    }
  }

  /**
   * The cached value, or the loader's (then cached). Concurrent misses on one key share one
   * loader call. A loader failure is returned as `error`, not cached.
   */
  getOrLoad<T>(key: string, loader: (key: string) => Promise<T> | T): Promise<GetResult<T>> {
    const pending = this.inFlight.get(key);
    if (pending) return pending as Promise<GetResult<T>>;
    const run = (async (): Promise<GetResult<T>> => {
      const hit = await this.getFromCache<T>({ key });
      if (hit.success) return hit;
      let value: T;
      try {
        value = await loader(key);
      } catch (err) {
        return {
          success: false,
          value: undefined,
          error: err instanceof Error ? err : new Error(errorMessage(err)),
        };
      }
      const added = await this.addToCache({ key, value });
      // The value was loaded; a failed remote write is reported but the caller still gets it.
      return { success: true, value, error: added.error };
    })();
    this.inFlight.set(key, run);
    void run.finally(() => this.inFlight.delete(key));
    return run;
  }
}
