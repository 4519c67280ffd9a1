import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoWithOffset, timezoneName } from './time.js';

/** The slow, obviously right formatting, to compare against. */
function reference(ms: number): string {
  const offsetMin = -new Date(ms).getTimezoneOffset();
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 23);
  const abs = Math.abs(offsetMin);
  return `${local}${offsetMin >= 0 ? '+' : '-'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

describe('isoWithOffset', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('matches the reference formatting across milliseconds, seconds and days', () => {
    const start = Date.UTC(2026, 2, 29, 0, 59, 58, 990);
    for (let ms = start; ms < start + 2500; ms += 7) expect(isoWithOffset(ms)).toBe(reference(ms));
    for (const ms of [
      0,
      1,
      999,
      1000,
      1001,
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
    ]) {
      expect(isoWithOffset(ms)).toBe(reference(ms));
    }
  });

  it('has the ISO 8601 shape with milliseconds and the offset', () => {
    expect(isoWithOffset(Date.now())).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/,
    );
  });
});

describe('timezoneName', () => {
  const original = process.env['TZ'];
  afterEach(() => {
    if (original === undefined) delete process.env['TZ'];
    else process.env['TZ'] = original;
  });

  it("answers Intl's en-US short zone name, UTC and its aliases (the fast path) included", () => {
    // Node re-reads the zone when TZ is assigned. UTC and its aliases go through the fast path,
    // GMT zones (offset 0, another name), zones with and without an abbreviation through Intl.
    const zones = [
      'UTC',
      'Etc/UTC',
      'Etc/UCT',
      'Zulu',
      'Etc/GMT',
      'Europe/London',
      'Africa/Abidjan',
      'Asia/Shanghai',
      'America/Chicago',
      '',
    ];
    for (const zone of zones) {
      process.env['TZ'] = zone;
      for (const at of [new Date(Date.UTC(2026, 0, 15)), new Date(Date.UTC(2026, 6, 15))]) {
        const intl = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
          .formatToParts(at)
          .find((p) => p.type === 'timeZoneName')?.value;
        expect({ zone, name: timezoneName(at) }).toEqual({ zone, name: intl });
      }
    }
  });
});
