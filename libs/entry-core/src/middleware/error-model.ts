import { STATUS_CODES } from 'node:http';
import { z } from '../zod.js';

/**
 * The shape of the JSON error body an HTTP transport writes for errors svcboot produces itself
 * (middleware rejections, recovered exceptions, 404 and 405): `google` is Google's JSON API error
 * (`{"error": {code, status, message, details}}`), `amazon` is rk-boot's Amazon style
 * (`{"response": {"errors": [{"error": {…}}]}}`). Both carry the request id.
 */
export const errorModelSchema = z.enum(['google', 'amazon']);
export type ErrorModel = z.output<typeof errorModelSchema>;

/** What an error body says. */
export interface HttpErrorInfo {
  httpStatus: number;
  /** The gRPC code name in Google's spelling (`UNAUTHENTICATED`), for the google model's `status`. */
  grpcStatus: string;
  message: string;
  requestId: string;
  /** google.rpc.Status details (Any values as JSON) to keep, before the RequestInfo. */
  details?: readonly unknown[];
}

const REQUEST_INFO = 'type.googleapis.com/google.rpc.RequestInfo';

/** The error body for `info` in `model`, as a JSON-ready object. */
export function errorBody(model: ErrorModel, info: HttpErrorInfo): Record<string, unknown> {
  if (model === 'amazon') {
    return {
      response: {
        errors: [
          {
            error: {
              code: info.httpStatus,
              status: STATUS_CODES[info.httpStatus] ?? 'Error',
              message: info.message,
              details: info.details ? [...info.details] : [],
            },
          },
        ],
      },
      requestId: info.requestId,
    };
  }
  return {
    error: {
      code: info.httpStatus,
      status: info.grpcStatus,
      message: info.message,
      details: [...(info.details ?? []), { '@type': REQUEST_INFO, requestId: info.requestId }],
    },
  };
}

const GRPC_STATUS_BY_HTTP: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  409: 'ABORTED',
  413: 'RESOURCE_EXHAUSTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's canonical status for an HTTP status (the mapping of google.rpc.Code's comments). */
export function grpcStatusOfHttp(httpStatus: number): string {
  return (
    GRPC_STATUS_BY_HTTP[httpStatus] ??
    (httpStatus >= 500 ? 'INTERNAL' : httpStatus >= 400 ? 'FAILED_PRECONDITION' : 'OK')
  );
}

/** `Unauthenticated` → `UNAUTHENTICATED`, `ResourceExhausted` → `RESOURCE_EXHAUSTED`. */
export function googleStatusName(codeName: string): string {
  let name = STATUS_NAMES.get(codeName);
  if (name === undefined) {
    // google.rpc.Code spells code 1 CANCELLED; grpc-js's name for it is Canceled.
    name =
      codeName === 'Canceled' || codeName === 'Cancelled'
        ? 'CANCELLED'
        : codeName.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    // Code names are few (a refusal's, a handler's): remembered, a shed call costs no regex.
    if (STATUS_NAMES.size < 64) STATUS_NAMES.set(codeName, name);
  }
  return name;
}

const STATUS_NAMES = new Map<string, string>();
