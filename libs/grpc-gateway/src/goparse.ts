/**
 * Text parsers that accept what Go's strconv, encoding/base64 and time accept, since grpc-gateway
 * reads path and query values with them (runtime/convert.go, runtime/query.go). Each returns the
 * value or throws a ParseError whose message says what was wrong with which text.
 */

export class ParseError extends Error {}

const fail = (fn: string, s: string, why: string): never => {
  throw new ParseError(`${fn}: parsing ${JSON.stringify(s)}: ${why}`);
};

/** strconv.ParseBool. */
export function parseBool(s: string): boolean {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'true':
    case 'TRUE':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'false':
    case 'FALSE':
    case 'False':
      return false;
    default:
      return fail('strconv.ParseBool', s, 'invalid syntax');
  }
}

function digitValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 122) return c - 87;
  if (c >= 65 && c <= 90) return c - 55;
  return 99;
}

/** Go's underscoreOK: `_` only between digits, or between a base prefix and a digit. */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'bBoOxX'.includes(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** The magnitude of an unsigned integer text in `base` (0: Go's prefixes), or undefined on bad syntax. */
function parseMagnitude(s: string, base: 0 | 10): bigint | undefined {
  if (s === '') return undefined;
  let b = 10;
  let body = s;
  let allowUnderscore = false;
  if (base === 0) {
    allowUnderscore = true;
    if (s.length >= 3 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X')) {
      b = 16;
      body = s.slice(2);
    } else if (s.length >= 3 && s[0] === '0' && (s[1] === 'b' || s[1] === 'B')) {
      b = 2;
      body = s.slice(2);
    } else if (s.length >= 3 && s[0] === '0' && (s[1] === 'o' || s[1] === 'O')) {
      b = 8;
      body = s.slice(2);
    } else if (s.length >= 2 && s[0] === '0') {
      b = 8;
      body = s.slice(1);
    }
  }
  let n = 0n;
  const big = BigInt(b);
  let digits = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === 95 && allowUnderscore) continue;
    const d = digitValue(c);
    if (d >= b) return undefined;
    n = n * big + BigInt(d);
    digits++;
  }
  if (digits === 0) return undefined;
  if (allowUnderscore && body.includes('_') && !underscoreOK(s)) return undefined;
  return n;
}

/** strconv.ParseInt(s, base, bits) as a bigint. */
export function goParseInt(s: string, base: 0 | 10, bits: 32 | 64): bigint {
  let body = s;
  let negative = false;
  if (s[0] === '+' || s[0] === '-') {
    negative = s[0] === '-';
    body = s.slice(1);
  }
  const mag = parseMagnitude(body, base);
  if (mag === undefined) return fail('strconv.ParseInt', s, 'invalid syntax');
  const limit = 1n << BigInt(bits - 1);
  if (negative ? mag > limit : mag >= limit)
    return fail('strconv.ParseInt', s, 'value out of range');
  return negative ? -mag : mag;
}

/** strconv.ParseUint(s, base, bits) as a bigint. */
export function parseUint(s: string, base: 0 | 10, bits: 32 | 64): bigint {
  const mag = parseMagnitude(s, base);
  if (mag === undefined) return fail('strconv.ParseUint', s, 'invalid syntax');
  if (mag >= 1n << BigInt(bits)) return fail('strconv.ParseUint', s, 'value out of range');
  return mag;
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?\d+)$/;

/** strconv.ParseFloat(s, bits); NaN and ±Infinity as JS numbers. */
export function goParseFloat(s: string, bits: 32 | 64): number {
  const lower = s.toLowerCase();
  const unsigned = lower[0] === '+' || lower[0] === '-' ? lower.slice(1) : lower;
  if (unsigned === 'inf' || unsigned === 'infinity') return lower[0] === '-' ? -Infinity : Infinity;
  if (unsigned === 'nan') return NaN;
  let n: number;
  if (DECIMAL.test(s)) n = Number(s);
  else {
    const m = HEX_FLOAT.exec(s);
    if (!m || !underscoreOK(s.replace(/[pP].*$/, '').replace('.', '')))
      return fail('strconv.ParseFloat', s, 'invalid syntax');
    const intPart = (m[2] ?? '').replace(/_/g, '');
    const fracPart = (m[3] ?? '').replace(/_/g, '');
    if (intPart === '' && fracPart === '') return fail('strconv.ParseFloat', s, 'invalid syntax');
    const mantissa = Number.parseInt(`${intPart}${fracPart}` || '0', 16);
    n = mantissa * 2 ** (Number(m[4]) - 4 * fracPart.length);
    if (m[1] === '-') n = -n;
  }
  if (bits === 32) n = Math.fround(n);
  if (!Number.isFinite(n)) return fail('strconv.ParseFloat', s, 'value out of range');
  return n;
}

const STD_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_B64 = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/;

/** runtime.Bytes: padded standard base64, else padded URL-safe base64 (newlines ignored, as Go does). */
export function parseBytes(s: string): Buffer {
  const t = s.includes('\n') || s.includes('\r') ? s.replace(/[\r\n]/g, '') : s;
  if (STD_B64.test(t)) return Buffer.from(t, 'base64');
  if (URL_B64.test(t)) return Buffer.from(t, 'base64url');
  return fail('base64', s, 'illegal base64 data');
}

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_DURATION = (1n << 63n) - 1n;

/** time.ParseDuration (`1h30m`, `1.5s`, `-300ms`), as nanoseconds. */
export function parseGoDuration(s: string): bigint {
  let rest = s;
  let negative = false;
  if (rest[0] === '-' || rest[0] === '+') {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return fail('time.ParseDuration', s, 'invalid duration');
  let total = 0n;
  const part = /^(\d*)(?:\.(\d*))?([^\d.]+)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === ''))
      return fail('time.ParseDuration', s, 'invalid duration');
    const unit = UNIT_NANOS[m[3]!];
    if (unit === undefined)
      return fail('time.ParseDuration', s, `unknown unit ${JSON.stringify(m[3])} in duration`);
    const whole = BigInt(m[1] || '0') * unit;
    const frac = m[2] ?? '';
    // Fractions are truncated to whole nanoseconds, as Go does.
    const fracNanos = frac === '' ? 0n : (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += whole + fracNanos;
    if (total > MAX_DURATION + (negative ? 1n : 0n))
      return fail('time.ParseDuration', s, 'invalid duration');
    rest = rest.slice(m[0].length);
  }
  return negative ? -total : total;
}

const RFC3339 =
  /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|([+-])(\d\d):(\d\d))$/;

/** Days from 1970-01-01 to a proleptic Gregorian date (no Date: it maps years below 100 to 19xx). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const MIN_SECONDS = -62135596800; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z

/** time.Parse(time.RFC3339Nano, s) checked as a valid Timestamp: seconds and nanos. */
export function parseRfc3339(s: string): { seconds: number; nanos: number } {
  const m = RFC3339.exec(s);
  if (!m)
    return fail('time.Parse', s, 'not an RFC 3339 time (2006-01-02T15:04:05.999999999Z07:00)');
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const monthDays = [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  if (mo < 1 || mo > 12 || d < 1 || d > monthDays[mo - 1]! || h > 23 || mi > 59 || se > 59)
    return fail('time.Parse', s, 'a field is out of range');
  let offset = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return fail('time.Parse', s, 'time zone offset out of range');
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS)
    throw new ParseError(`${s} before 0001-01-01 or after 9999-12-31`);
  return { seconds, nanos: m[7] ? Number(m[7].padEnd(9, '0')) : 0 };
}

/** The default bound on a request's query parameters and form fields together. */
export const DEFAULT_MAX_QUERY_PARAMS = 1000;

/**
 * url.ParseQuery, in one pass: `&`-separated `key=value` pairs, `+` as space, `%XX` escapes.
 * Values of a key keep their order; keys keep the order they first appear in. Go reports a `;`
 * separator and a bad escape as errors (grpc-gateway answers 400); so does this, after the pass.
 * With `limit`, more than `limit.max` pairs (counted across calls sharing it) stop the pass with
 * an error at once.
 */
export function parseQueryInto(
  query: string,
  into: Map<string, string[]>,
  limit?: { left: number; readonly max: number },
): string | undefined {
  let error: string | undefined;
  let start = 0;
  const n = query.length;
  while (start <= n) {
    let end = query.indexOf('&', start);
    if (end < 0) end = n;
    if (end > start) {
      // Counted before anything is decoded: the limit is what keeps a request's cost bounded.
      if (limit && --limit.left < 0)
        return `too many query parameters (more than ${limit.max}); send fewer, or raise gwOption.maxQueryParams`;
      const pair = query.slice(start, end);
      if (pair.includes(';')) error ??= 'invalid semicolon separator in query';
      else {
        const eq = pair.indexOf('=');
        const key = unescapeQuery(eq < 0 ? pair : pair.slice(0, eq));
        const value = eq < 0 ? '' : unescapeQuery(pair.slice(eq + 1));
        if (key === undefined)
          error ??= `invalid URL escape in ${JSON.stringify(eq < 0 ? pair : pair.slice(0, eq))}`;
        else if (value === undefined)
          error ??= `invalid URL escape in ${JSON.stringify(pair.slice(eq + 1))}`;
        else {
          const list = into.get(key);
          if (list) list.push(value);
          else into.set(key, [value]);
        }
      }
    }
    start = end + 1;
  }
  return error;
}

/** url.QueryUnescape: undefined on a malformed `%` escape. */
function unescapeQuery(s: string): string | undefined {
  const plus = s.indexOf('+');
  const pct = s.indexOf('%');
  if (plus < 0 && pct < 0) return s;
  const t = plus < 0 ? s : s.replace(/\+/g, ' ');
  if (pct < 0) return t;
  const bytes: number[] = [];
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 37) {
      const hi = digitValue(t.charCodeAt(i + 1));
      const lo = digitValue(t.charCodeAt(i + 2));
      if (hi > 15 || lo > 15) return undefined;
      bytes.push(hi * 16 + lo);
      i += 2;
    } else if (c < 128) bytes.push(c);
    else {
      const cp = t.codePointAt(i)!;
      if (cp > 0xffff) i++;
      for (const b of Buffer.from(String.fromCodePoint(cp))) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
