import { status as Status } from '@svcboot/grpc-typed/internal/grpc-js';
import type { RejectStatus } from '@svcboot/entry-core';
import {
  GRPC_CODE_NAMES,
  httpStatusOfGrpcCode,
} from '@svcboot/entry-core/internal/middleware/grpc-codes';

/** gRPC code names as grpc-go's `codes.Code.String()` spells them, by number (entry-core's table). */
export const CODE_NAMES: readonly string[] = GRPC_CODE_NAMES;

/** The gRPC code of a CallRejection's status (its names are gRPC's code names). */
export function codeOfRejection(status: RejectStatus): number {
  const code = CODE_NAMES.indexOf(status);
  return code < 0 ? 2 : code;
}

export function codeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

/** grpc-gateway's `runtime.HTTPStatusFromCode`. */
export function httpStatusFromCode(code: number): number {
  return httpStatusOfGrpcCode(code);
}

/** The gRPC code for an HTTP status svcboot answers itself (the inverse of httpStatusFromCode where it is one to one); Unknown otherwise. */
const CODE_OF_HTTP: Readonly<Record<number, number>> = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  409: 10,
  429: 8,
  500: 13,
  501: 12,
  503: 14,
  504: 4,
};

export function codeOfHttpStatus(httpStatus: number): number {
  return CODE_OF_HTTP[httpStatus] ?? 2;
}

export { Status };
