/** A gRPC timeout unit's length in ms (gRPC over HTTP/2: `Timeout → TimeoutValue TimeoutUnit`). */
const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * The call's time from a deadline header in gRPC's timeout form (`1500m`, `2S`: at most 8 digits
 * and one unit letter, as svcboot's httpclient and grpc-gateway send it), in ms; undefined when
 * absent, malformed or 0 (no deadline then, as grpc-gateway sets none for a zero timeout).
 */
export function deadlineHeaderMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = GRPC_TIMEOUT.exec(value.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 ? ms : undefined;
}
