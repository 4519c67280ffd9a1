import { describe, expect, it } from 'vitest';
import { deadlineHeaderMs } from './deadline-header.js';

describe('deadlineHeader: a gRPC timeout as the call deadline', () => {
  it('reads 1-8 digits and one unit (H M S m u n), as gRPC over HTTP/2 writes it', () => {
    expect(deadlineHeaderMs('1500m')).toBe(1500);
    expect(deadlineHeaderMs('2S')).toBe(2000);
    expect(deadlineHeaderMs('1M')).toBe(60_000);
    expect(deadlineHeaderMs('1H')).toBe(3_600_000);
    expect(deadlineHeaderMs('2500u')).toBe(2.5);
    expect(deadlineHeaderMs('99999999m')).toBe(99_999_999);
  });
  it('none for an absent, zero or malformed value', () => {
    for (const v of [undefined, '', '0m', '123456789m', '10', 'm', '1.5S', '-1S', '10s'])
      expect(deadlineHeaderMs(v), String(v)).toBeUndefined();
  });
});
