/**
 * The Connect protocol's wire vocabulary (connectrpc.com/docs/protocol): content types, headers,
 * code names and their HTTP statuses, the timeout header, and the error's JSON form.
 */

/** What a request's Content-Type (or a GET's `encoding`) says about the call. */
export interface ConnectType {
  /** `application/connect+…`: enveloped messages (streaming RPCs). */
  stream: boolean;
  /** proto (binary) rather than JSON. */
  binary: boolean;
}

const CONTENT_TYPE = /^application\/(connect\+)?(?:(json)(?:; ?charset=utf-?8)?|(proto))$/i;

/** A Connect Content-Type, or undefined for any other (the caller answers 415). */
export function parseConnectType(contentType: string | undefined): ConnectType | undefined {
  if (contentType === undefined) return undefined;
  const m = CONTENT_TYPE.exec(contentType);
  if (!m) return undefined;
  return { stream: m[1] !== undefined, binary: m[3] !== undefined };
}

/** A GET's `encoding` query parameter. */
export function parseGetEncoding(encoding: string | null): ConnectType | undefined {
  if (encoding === 'proto') return { stream: false, binary: true };
  if (encoding === 'json') return { stream: false, binary: false };
  return undefined;
}

export function responseContentType(type: ConnectType): string {
  if (type.stream) return type.binary ? 'application/connect+proto' : 'application/connect+json';
  return type.binary ? 'application/proto' : 'application/json';
}

/** The one protocol version there is (`Connect-Protocol-Version: 1`, `?connect=v1`). */
export const PROTOCOL_VERSION = '1';

/** Connect's code strings, by gRPC code number (the codes are gRPC's). */
const CODE_STRINGS = [
  'ok',
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
] as const;

export function connectCodeString(code: number): string {
  return CODE_STRINGS[code] ?? 'unknown';
}

/** The HTTP status of a unary error, as the protocol specification maps each code. */
const HTTP_OF_CODE = [
  200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401,
] as const;

export function httpStatusOfConnectCode(code: number): number {
  return HTTP_OF_CODE[code] ?? 500;
}

/** A status the adapter answers itself, before or instead of the handler. */
export class ConnectFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** Extra response headers (Accept-Encoding for an unsupported compression). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * `Connect-Timeout-Ms`: at most 10 digits of milliseconds. Undefined when absent; a ConnectFailure
 * (InvalidArgument) when malformed.
 */
export function parseTimeoutMs(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (!/^\d{1,10}$/.test(text))
    throw new ConnectFailure(3, `protocol error: invalid connect timeout value: ${text}`);
  return Number(text);
}

/** One error detail as Connect writes it: the Any's type name and its bytes (base64, no padding). */
export interface ConnectDetail {
  type: string;
  value: string;
}

/** The error's JSON: `{"code": "not_found", "message": "…", "details": [...]}` (empty parts left out). */
export function errorJson(
  code: number,
  message: string,
  details: readonly ConnectDetail[],
): Record<string, unknown> {
  const o: Record<string, unknown> = { code: connectCodeString(code) };
  if (message.length > 0) o.message = message;
  if (details.length > 0) o.details = details;
  return o;
}

/** Base64 without padding (`std_raw`), as Connect writes bytes in headers and error details. */
export function base64Raw(bytes: Uint8Array): string {
  const b64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let end = b64.length;
  while (end > 0 && b64[end - 1] === '=') end--;
  return b64.slice(0, end);
}
