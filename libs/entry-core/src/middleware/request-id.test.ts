import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-id.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newRequestId', () => {
  it('gives version-4 UUIDs, all different, across many refills of its pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = newRequestId();
      expect(id).toMatch(V4);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
  });

  it('varies every random digit (no position stuck at one value)', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (let pos = 0; pos < 36; pos++) {
      if ([8, 13, 14, 18, 23].includes(pos)) continue;
      const chars = new Set(ids.map((id) => id[pos]));
      // The variant digit has 4 values; the others 16.
      expect(chars.size).toBe(pos === 19 ? 4 : 16);
    }
  });
});
