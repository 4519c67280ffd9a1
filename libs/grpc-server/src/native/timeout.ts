/**
 * `grpc-timeout`: at most 8 ASCII digits and one unit, `H` hours, `M` minutes, `S` seconds,
 * `m` milliseconds, `u` microseconds, `n` nanoseconds (gRPC's PROTOCOL-HTTP2.md).
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

const TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * The timeout in milliseconds (fractions rounded up, so a 1 ns timeout is still a deadline), or
 * `undefined` when the value is not a valid `grpc-timeout`.
 */
export function parseGrpcTimeout(value: string): number | undefined {
  const m = TIMEOUT.exec(value.trim());
  if (!m) return undefined;
  return Math.ceil(Number(m[1]) * UNIT_MS[m[2]!]!);
}

/**
 * The longest a Node timer can wait (2^31-1 ms, ~24.8 days); a longer deadline is none in practice,
 * as grpc-js treats it.
 */
export const MAX_TIMER_MS = 2_147_483_647;
