import { LRUCache } from 'lru-cache';

/** The in-process tier: serialised values in an LRU with a time to live. */
export class LocalTier {
  private readonly lru: LRUCache<string, string>;

  constructor(size: number, ttlMs: number) {
    this.lru = new LRUCache<string, string>({
      max: size,
      ttl: ttlMs,
      ttlAutopurge: false,
      updateAgeOnGet: false,
    });
  }

  get(key: string): string | undefined {
    return this.lru.get(key);
  }

  set(key: string, text: string): void {
    this.lru.set(key, text);
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  get size(): number {
    return this.lru.size;
  }

  clear(): void {
    this.lru.clear();
  }
}
