/**
 * gRPC status codes as the call model names them (`CallContext.resCode`, `RejectStatus`): the
 * names grpc-go's `codes.Code.String()` gives, by number, and grpc-gateway's HTTP status for each.
 * One table for every transport and middleware that maps between them.
 */
export const GRPC_CODE_NAMES: readonly string[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

const CODE_OF_NAME = new Map(GRPC_CODE_NAMES.map((n, i) => [n, i]));

/** The number of a gRPC code name (`NotFound` → 5), or undefined for a name that is none. */
export function grpcCodeOfName(name: string): number | undefined {
  return CODE_OF_NAME.get(name);
}

/** grpc-gateway's HTTP status for each gRPC code (`runtime.HTTPStatusFromCode`). */
const HTTP_STATUS_OF_CODE: readonly number[] = [
  200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401,
];

/** grpc-gateway's `runtime.HTTPStatusFromCode`: 500 for a code it does not know. */
export function httpStatusOfGrpcCode(code: number): number {
  return HTTP_STATUS_OF_CODE[code] ?? 500;
}
