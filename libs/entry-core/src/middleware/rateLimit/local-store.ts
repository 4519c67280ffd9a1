import { take, type Decision, type Limit } from './gcra.js';

/**
 * One limit's clients in process: their `tat` by client key, at most `maxKeys` of them. A client
 * whose `tat` has passed has a full bucket, the same as one never seen, so forgetting it changes
 * nothing: when full, the store first drops those (at most once a second), then the least
 * recently seen one (which then starts again with a full bucket).
 */
export class LocalStore {
  /** Insertion order is recency order: a client seen again is moved to the end. */
  private readonly tats = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    private readonly limit: Limit,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.tats.size;
  }

  /** Decides a call of `key` at `now` (ms) into `out`. */
  take(key: string, now: number, out: Decision): void {
    const tats = this.tats;
    const tat = tats.get(key);
    const next = take(this.limit, tat ?? 0, now, out);
    if (!out.allowed) return;
    if (tat !== undefined) tats.delete(key);
    else if (tats.size >= this.maxKeys) this.makeRoom(now);
    tats.set(key, next);
  }

  private makeRoom(now: number): void {
    const tats = this.tats;
    if (now - this.lastSweep >= 1000) {
      this.lastSweep = now;
      for (const [k, tat] of tats) if (tat <= now) tats.delete(k);
    }
    if (tats.size >= this.maxKeys) {
      const oldest = tats.keys().next();
      if (!oldest.done) tats.delete(oldest.value);
    }
  }
}
