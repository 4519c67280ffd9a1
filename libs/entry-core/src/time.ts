/** ISO 8601 with the local offset, e.g. `2026-11-21T12:46:50.123+08:00` (what SPEC.md's records and headers show). */
export function isoWithOffset(ms: number): string {
  const offsetMin = -new Date(ms).getTimezoneOffset();
  const local = new Date(ms + offsetMin * 60_000).toISOString();
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local.slice(0, 23)}${sign}${hh}:${mm}`;
}

/** The short name of the local time zone (`UTC`, `CST`, or `GMT+8` where there is no abbreviation). */
export function timezoneName(at: Date = new Date()): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? 'UTC';
}
