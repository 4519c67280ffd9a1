/** Keys whose values are secrets: never logged, never echoed in an error. */
// Over-matching (say, `bypass`) only hides a value; under-matching would leak one.
// `basic` is the auth middleware's list of user:password pairs; `basicAuth` prom.pusher's user:pass.
const SECRET_KEY = /(pass|password|passwd|secret|token|apikey|basicauth)$|^basic$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export const REDACTED = '******';

/** `redis://user:pw@host` → `redis://user:******@host` */
export function redactUrlCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)([^\s@/]+)@/gi, `$1${REDACTED}@`);
}

/** Collects every secret value in a config tree (for scrubbing messages that might echo one). */
export function collectSecrets(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) collectSecrets(item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (isSecretKey(key) && Array.isArray(child)) {
        collectSecretList(key, child, into);
      } else if (
        isSecretKey(key) &&
        (typeof child === 'string' || typeof child === 'number') &&
        String(child) !== ''
      ) {
        into.add(String(child));
      } else {
        collectSecrets(child, into);
      }
    }
  } else if (typeof value === 'string') {
    const m = /:\/\/[^\s:/@]*:([^\s@/]+)@/.exec(value);
    if (m?.[1]) into.add(m[1]);
  }
  return into;
}

/**
 * The items of a list under a secret key (the auth middleware's `apiKey` and `basic`): each
 * string, the password of a `user:password` pair, and the `key` of a `{name, key}` item.
 */
function collectSecretList(key: string, list: readonly unknown[], into: Set<string>): void {
  for (const item of list) {
    if (typeof item === 'string' && item !== '') {
      into.add(item);
      const colon = item.indexOf(':');
      if (key.toLowerCase() === 'basic' && colon > 0 && colon < item.length - 1)
        into.add(item.slice(colon + 1));
    } else if (item !== null && typeof item === 'object') {
      const k = (item as { key?: unknown }).key;
      if (typeof k === 'string' && k !== '') into.add(k);
    }
  }
}

/** A copy of a config tree safe to print: secret values replaced. */
export function redactConfig<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redactConfig(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      out[key] =
        isSecretKey(key) && child !== '' && child !== undefined ? REDACTED : redactConfig(child);
    }
    return out as T;
  }
  if (typeof value === 'string') return redactUrlCredentials(value) as T;
  return value;
}

/** Scrubs known secret values (and URL credentials) out of free text such as a driver's error message. */
export class SecretScrubber {
  private readonly secrets: string[];
  constructor(secrets: Iterable<string>) {
    // Longest first, so a secret containing another is replaced whole.
    this.secrets = [...new Set(secrets)]
      .filter((s) => s.length > 0)
      .sort((a, b) => b.length - a.length);
  }
  /** A scrubber of these secrets and `more` (a reloaded configuration's). */
  with(more: Iterable<string>): SecretScrubber {
    return new SecretScrubber([...this.secrets, ...more]);
  }
  scrub(text: string): string {
    let out = redactUrlCredentials(text);
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }
}
