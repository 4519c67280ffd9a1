import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { CallContext, CallMiddleware } from '../call.js';
import { isIgnored, matchKey, matchesCall } from '../definition.js';
import { CallRejection } from '../rejection.js';
import { limitOf, type Decision, type Limit } from './gcra.js';
import { LocalStore } from './local-store.js';
import { RedisStore, StoreUnavailable, type ScriptClient } from './redis-store.js';
import type { RateLimitConfig } from './schema.js';

const SOURCE_OVER = { middleware: 'rateLimit', reason: 'over_limit' } as const;
const SOURCE_STORE = { middleware: 'rateLimit', reason: 'store_unavailable' } as const;
/** Operations whose rule is remembered; beyond (HTTP paths with ids), the rule is looked up each time. */
const MAX_CACHED_OPERATIONS = 10_000;
/** At most one warning per this many ms while a shared limit fails open. */
const WARN_EVERY_MS = 10_000;

/** One limit: the default (`reqPerSec`) or a `paths` item, with its store. */
interface Rule {
  readonly pattern: string;
  readonly limit: Limit;
  readonly limitText: string;
  readonly local: LocalStore;
  readonly shared: RedisStore | undefined;
  /** `<prefix><entry>:<pattern>:`, the start of its Redis keys. */
  readonly redisPrefix: string;
}

export interface RateLimitDeps {
  entryName: string;
  logger: Logger;
  registry: Registry;
  /** The Redis client of `config.kvstore`, when the limit is shared. */
  client?: ScriptClient;
  /** Removes the app's secrets from a Redis error before it is logged. */
  redact?: (text: string) => string;
}

/**
 * Refuses calls over a client's budget with ResourceExhausted / 429, `Retry-After` and the IETF
 * draft's `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (also on calls it lets
 * through). In process by default; through Redis with `kvstore` (then `before` is asynchronous).
 */
export class RateLimitMiddleware implements CallMiddleware {
  private readonly rules: Rule[];
  private readonly ruleByOperation = new Map<string, Rule>();
  /** Reused by synchronous decisions: nothing allocated per call. */
  private readonly decision: Decision = { allowed: false, remaining: 0, resetMs: 0, retryMs: 0 };
  private readonly storeFailures: Counter<'entry_name' | 'outcome'> | undefined;
  private lastWarn = 0;
  private suppressed = 0;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly deps: RateLimitDeps,
  ) {
    const defaultBurst = (reqPerSec: number, burst: number | undefined): number =>
      burst ?? (config.algorithm === 'leakyBucket' ? 1 : Math.max(1, Math.ceil(reqPerSec)));
    const rule = (pattern: string, reqPerSec: number, burst: number | undefined): Rule => {
      const limit = limitOf(reqPerSec, defaultBurst(reqPerSec, burst));
      return {
        pattern,
        limit,
        limitText: String(reqPerSec > 0 ? limit.burst : 0),
        local: new LocalStore(limit, config.maxKeys),
        shared: deps.client ? new RedisStore(deps.client, limit, config.storeTimeoutMs) : undefined,
        redisPrefix: `${config.keyPrefix}${deps.entryName}:${pattern}:`,
      };
    };
    this.rules = [
      rule('*', config.reqPerSec, config.burst),
      ...config.paths.map((p) => rule(p.path, p.reqPerSec, p.burst)),
    ];
    if (deps.client) {
      const name = 'svc_rate_limit_store_failures_total';
      const existing = deps.registry.getSingleMetric(name);
      this.storeFailures =
        (existing as Counter<'entry_name' | 'outcome'> | undefined) ??
        new Counter({
          name,
          help: 'Calls a shared rate limit decided without Redis (no answer in time or an error), by outcome (allowed: failOpen, refused)',
          labelNames: ['entry_name', 'outcome'],
          registers: [deps.registry],
        });
    }
  }

  before(call: CallContext): void | Promise<void> {
    const info = call.info;
    // The entry's own routes (/livez, /readyz, metrics, grpc.health.v1) are never limited, nor
    // a call the transport already answered (an unknown gRPC method): it spends no budget.
    if (info.builtin === true || info.answered === true) return;
    if (this.config.ignore.length > 0 && isIgnored(this.config.ignore, call)) return;
    const rule = this.ruleFor(call);
    if (rule.limit.interval === Infinity) throw this.over(rule, Infinity, 0);
    const key = this.clientKey(call);
    if (rule.shared) return this.takeShared(rule, key, call);
    const d = this.decision;
    rule.local.take(key, Date.now(), d);
    this.answer(rule, d, call);
  }

  private answer(rule: Rule, d: Decision, call: CallContext): void {
    if (!d.allowed) throw this.over(rule, d.retryMs, d.resetMs);
    const headers = call.headers;
    headers.set('RateLimit-Limit', rule.limitText);
    headers.set('RateLimit-Remaining', String(d.remaining));
    headers.set('RateLimit-Reset', String(Math.ceil(d.resetMs / 1000)));
  }

  private over(rule: Rule, retryMs: number, resetMs: number): CallRejection {
    const retry = retryMs === Infinity ? undefined : Math.max(1, Math.ceil(retryMs / 1000));
    const headers: Record<string, string> = {
      'RateLimit-Limit': rule.limitText,
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(retry ?? Math.ceil(resetMs / 1000)),
    };
    if (retry !== undefined) headers['Retry-After'] = String(retry);
    return new CallRejection(
      'ResourceExhausted',
      retry === undefined
        ? 'rate limit: no calls allowed'
        : `rate limit exceeded, retry in ${retry} s`,
      headers,
      SOURCE_OVER,
    );
  }

  private async takeShared(rule: Rule, key: string, call: CallContext): Promise<void> {
    let d: Decision;
    try {
      d = await rule.shared!.take(
        rule.redisPrefix + (this.config.keyBy === 'apiKey' ? hashedApiKey(key) : key),
      );
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
      this.storeFailed(err, call);
      return;
    }
    this.answer(rule, d, call);
  }

  /**
   * Redis did not decide: fail open (let the call through) or closed (Unavailable). Either way
   * the record gets a pair, the counter counts it, and the log says so at most every 10 s (a warning
   * when open, an error when closed) with the number of calls since.
   */
  private storeFailed(err: StoreUnavailable, call: CallContext): void {
    const open = this.config.failOpen;
    this.storeFailures?.labels(this.deps.entryName, open ? 'allowed' : 'refused').inc();
    call.event.addPair('rateLimitStore', 'unavailable');
    const now = Date.now();
    if (now - this.lastWarn >= WARN_EVERY_MS) {
      const more = this.suppressed > 0 ? ` (${this.suppressed} more since the last message)` : '';
      this.lastWarn = now;
      this.suppressed = 0;
      const why = this.deps.redact ? this.deps.redact(err.message) : err.message;
      const store = `rate limit store "${this.config.kvstore}" unavailable (${why})`;
      if (open)
        this.deps.logger.warn(
          `${store}: letting calls through without the shared limit (failOpen: true)${more}`,
        );
      else this.deps.logger.error(`${store}: refusing calls (failOpen: false)${more}`);
    } else this.suppressed++;
    if (!open)
      throw new CallRejection(
        'Unavailable',
        'rate limit store unavailable, retry later',
        { 'Retry-After': '1' },
        SOURCE_STORE,
      );
  }

  /** The first `paths` item that names the call, else the default; remembered by operation. */
  private ruleFor(call: CallContext): Rule {
    const key = matchKey(call);
    const cached = this.ruleByOperation.get(key);
    if (cached !== undefined) return cached;
    const rules = this.rules;
    let found = rules[0]!;
    for (let i = 1; i < rules.length; i++) {
      if (matchesCall(rules[i]!.pattern, call)) {
        found = rules[i]!;
        break;
      }
    }
    if (this.ruleByOperation.size < MAX_CACHED_OPERATIONS) this.ruleByOperation.set(key, found);
    return found;
  }

  /** Whose budget the call spends, by `keyBy`; without an API key or a subject, the address's. */
  private clientKey(call: CallContext): string {
    switch (this.config.keyBy) {
      case 'global':
        return 'global';
      case 'apiKey': {
        const key = call.headers.get('x-api-key');
        if (key) return `key:${key}`;
        break;
      }
      case 'subject': {
        const subject = call.principal?.subject;
        if (subject !== undefined) return `sub:${subject}`;
        break;
      }
    }
    return `ip:${hostOf(call.info.remoteAddr)}`;
  }
}

/** `1.2.3.4:5678` → `1.2.3.4`, `[::1]:5678` and `::1:5678` → `::1`. */
export function hostOf(remoteAddr: string): string {
  const colon = remoteAddr.lastIndexOf(':');
  if (colon < 0) return remoteAddr;
  const host = remoteAddr.slice(0, colon);
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** An API key is a secret: Redis keys name its hash, never the key. */
function hashedApiKey(key: string): string {
  return key.startsWith('key:')
    ? `key:${createHash('sha256').update(key.slice(4)).digest('base64url').slice(0, 22)}`
    : key;
}
