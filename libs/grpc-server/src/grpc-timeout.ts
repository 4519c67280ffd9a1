/**
 * A `Grpc-Timeout` request header as grpc-gateway's runtime/context.go timeoutDecode reads it:
 * an integer (strconv.ParseInt, base 10, 64 bits) followed by one unit letter, H M S m u n.
 * Returns milliseconds (0: no deadline, as grpc-gateway sets none for a zero timeout), or
 * undefined when the value is not valid (grpc-gateway answers 400 InvalidArgument).
 */
const UNIT_MS: Record<string, number> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000001,
};

export function decodeGrpcTimeout(value: string): number | undefined {
  if (value.length < 2) return undefined;
  const unit = UNIT_MS[value[value.length - 1]!];
  if (unit === undefined) return undefined;
  const digits = value.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) return undefined;
  const n = BigInt(digits);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return Number(n) * unit;
}
