import { createHash } from 'node:crypto';
import type { Decision, Limit } from './gcra.js';

/**
 * What a shared limit needs of a Redis client: EVALSHA and EVAL, as ioredis's `Redis` and
 * `Cluster` have them (a `kvstore` entry's `client`). Structural, so that entry-core does not
 * depend on entry-kv.
 */
export interface ScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/** True when `value` has the methods of a ScriptClient. */
export function isScriptClient(value: unknown): value is ScriptClient {
  const v = value as Partial<ScriptClient> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.evalsha === 'function' &&
    typeof v.eval === 'function'
  );
}

/**
 * The same arithmetic as gcra.ts `take`, atomically in Redis, on Redis's clock (TIME), so that
 * instances with skewed clocks share one budget. KEYS[1]: the client's key; ARGV: interval (ms),
 * tolerance (ms). The key holds `tat` and expires once the bucket is full again. Returns
 * {allowed (0|1), remaining, resetMs, retryMs} (ms rounded up).
 */
export const GCRA_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local base = tat
if base < now then base = now end
local nxt = base + interval
local ahead = nxt - now
if ahead > tolerance + 0.000001 then
  return {0, 0, math.ceil(base - now), math.ceil(ahead - tolerance)}
end
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(ahead) + 1)
return {1, math.floor((tolerance - ahead) / interval + 0.000001), math.ceil(ahead), 0}
`;

/** The script's SHA-1 for EVALSHA: computed on the first shared limit's first call, not at import (every app's start loads this module). */
let gcraSha: string | undefined;
const gcraShaOf = (): string => (gcraSha ??= createHash('sha1').update(GCRA_SCRIPT).digest('hex'));

/** Why a shared limit could not decide. */
export class StoreUnavailable extends Error {
  override name = 'StoreUnavailable';
}

/** One limit shared through Redis. */
export class RedisStore {
  private readonly intervalArg: string;
  private readonly toleranceArg: string;

  constructor(
    private readonly client: ScriptClient,
    limit: Limit,
    private readonly timeoutMs: number,
  ) {
    this.intervalArg = String(limit.interval);
    this.toleranceArg = String(limit.tolerance);
  }

  /** Decides a call of the Redis key `key`; rejects with StoreUnavailable when Redis fails or is too slow. */
  take(key: string): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new StoreUnavailable(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.run(key).then(
        (reply) => {
          clearTimeout(timer);
          const d = decisionOf(reply);
          if (d) resolve(d);
          else reject(new StoreUnavailable('unexpected reply to the rate limit script'));
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(new StoreUnavailable(err instanceof Error ? err.message : String(err)));
        },
      );
    });
  }

  private async run(key: string): Promise<unknown> {
    try {
      return await this.client.evalsha(gcraShaOf(), 1, key, this.intervalArg, this.toleranceArg);
    } catch (err) {
      // The script cache is empty after a Redis restart or on a new node: send the script itself.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return this.client.eval(GCRA_SCRIPT, 1, key, this.intervalArg, this.toleranceArg);
    }
  }
}

function decisionOf(reply: unknown): Decision | undefined {
  if (!Array.isArray(reply) || reply.length !== 4) return undefined;
  const [allowed, remaining, resetMs, retryMs] = reply.map(Number) as [
    number,
    number,
    number,
    number,
  ];
  if ([allowed, remaining, resetMs, retryMs].some((n) => !Number.isFinite(n))) return undefined;
  return { allowed: allowed === 1, remaining, resetMs, retryMs };
}
