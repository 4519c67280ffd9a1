/** The median of the numbers that are not NaN (NaN when none is). */
export const median = (xs: readonly number[]): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** `n` with thousands separators and `d` decimals; NaN as a dash. */
export const fmt = (n: number, d = 0): string =>
  Number.isNaN(n)
    ? '–'
    : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
