import type { Metadata } from '@grpc/grpc-js';
// The class from grpc-typed's two-part grpc-js: loading the gateway loads no more of grpc-js.
import { metadataClass } from '@svcboot/grpc-typed/internal/grpc-js';
import { validateHeaderName, validateHeaderValue, type IncomingHttpHeaders } from 'node:http';
import type { CallHeaders } from '@svcboot/entry-core';

/** Connection-level headers that never become metadata (RFC 9110 §7.6.1 plus HTTP/2's pseudo ones). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'http2-settings',
]);

/** grpc-gateway's `runtime.isPermanentHTTPHeader`: forwarded as `grpcgateway-<name>`. */
const PERMANENT = new Set([
  'accept',
  'accept-charset',
  'accept-language',
  'accept-ranges',
  'authorization',
  'cache-control',
  'content-type',
  'cookie',
  'date',
  'expect',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-schedule-tag-match',
  'if-unmodified-since',
  'max-forwards',
  'origin',
  'pragma',
  'referer',
  'user-agent',
  'via',
  'warning',
]);

/**
 * Metadata keys that never become response headers, in either style: the hop-by-hop ones (a
 * handler's `transfer-encoding` next to the gateway's Content-Length would leave proxies two
 * framings to choose from; HTTP/2 refuses these names, so they cannot travel on the gRPC path
 * either) and the body's own Content-Length and Content-Type, which the gateway sets (a handler's
 * `content-length` would frame an NDJSON stream with a wrong length).
 */
const NOT_RESPONSE_HEADERS = new Set([...HOP_BY_HOP, 'content-length', 'content-type']);

const VALID_KEY = /^[0-9a-z_.-]+$/;

/** A printable-ASCII value (gRPC's ASCII-Value): grpc-gateway skips any other. */
const ASCII_VALUE = /^[\x20-\x7e]*$/;
const BASE64_PADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64_RAW = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2,3})?$/;

/** runtime/context.go decodeBinHeader: padded standard base64 when the length is a multiple of 4, else unpadded; undefined when invalid. */
function decodeBinHeader(v: string): Buffer | undefined {
  if (v.length % 4 === 0 ? BASE64_PADDED.test(v) : BASE64_RAW.test(v))
    return Buffer.from(v, 'base64');
  return undefined;
}

/**
 * Incoming HTTP headers as gRPC metadata. grpc-gateway's default keeps `Grpc-Metadata-*` (prefix
 * removed), `Authorization`, and permanent headers as `grpcgateway-*`, and adds
 * `x-forwarded-host` (the request's `X-Forwarded-Host` or `Host`) and `x-forwarded-for` (the
 * request's values plus the peer's IP); the svc style forwards every header but the hop-by-hop
 * ones under its own name. Either way `-bin` headers are base64-decoded into binary metadata (an
 * undecodable one is left out), and a text value that is not printable ASCII is left out, as
 * grpc-gateway leaves it out.
 */
export function metadataFromHeaders(
  headers: IncomingHttpHeaders,
  svcStyle: boolean,
  peerIp = '',
): Metadata {
  const md = new (metadataClass())();
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name.startsWith(':') || HOP_BY_HOP.has(name)) continue;
    let key: string | undefined;
    if (svcStyle) key = name;
    else if (name === 'x-forwarded-for' || name === 'x-forwarded-host') continue;
    else if (name.startsWith('grpc-metadata-')) key = name.slice('grpc-metadata-'.length);
    else if (name === 'authorization') key = name;
    else if (PERMANENT.has(name)) key = `grpcgateway-${name}`;
    if (key === undefined || !VALID_KEY.test(key)) continue;
    const binary = key.endsWith('-bin');
    for (const v of Array.isArray(value) ? value : [value]) {
      if (binary) {
        const bytes = decodeBinHeader(v);
        if (bytes) md.add(key, bytes);
      } else if (ASCII_VALUE.test(v)) md.add(key, v);
    }
  }
  if (!svcStyle) {
    const host = headers['x-forwarded-host'] ?? headers.host;
    if (typeof host === 'string' && host !== '' && ASCII_VALUE.test(host))
      md.add('x-forwarded-host', host);
    const xff = headers['x-forwarded-for'];
    const list = xff === undefined ? [] : Array.isArray(xff) ? [...xff] : [xff];
    if (peerIp !== '') list.push(peerIp);
    const joined = list.join(', ');
    if (list.length > 0 && ASCII_VALUE.test(joined)) md.add('x-forwarded-for', joined);
  }
  return md;
}

/**
 * Puts one header into a flat response header list (`[name, value, name, value, …]`, as
 * `res.writeHead` takes it) with `setHeader`'s meaning: a name already there, in any case, gets
 * the new value instead of a second line.
 */
export function putHeader(out: string[], name: string, value: string): void {
  const length = name.length;
  for (let i = 0; i < out.length; i += 2) {
    // The length first, here: most names in a list differ in it, and then sameName is not called.
    const other = out[i]!;
    if (other.length === length && sameName(other, name)) {
      out[i + 1] = value;
      return;
    }
  }
  out.push(name, value);
}

/** ASCII case-insensitive equality of two header names, without lowercased copies. */
function sameName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 65 && x <= 90) x += 32;
    if (y >= 65 && y <= 90) y += 32;
    if (x !== y) return false;
  }
  return true;
}

/**
 * Response metadata as HTTP headers into a flat header list: plain names in svc style, else
 * `Grpc-Metadata-` / `Grpc-Trailer-`. Binary (`-bin`) values are left out, and so are hop-by-hop
 * keys, `content-length` and `content-type` (see NOT_RESPONSE_HEADERS); a key with several values
 * gives its first.
 */
export function addMetadataHeaders(
  out: string[],
  md: Metadata,
  svcStyle: boolean,
  trailer: boolean,
  keepExisting = false,
): void {
  const prefix = svcStyle ? '' : trailer ? 'Grpc-Trailer-' : 'Grpc-Metadata-';
  const map = md.getMap();
  for (const key in map) {
    const v = map[key];
    if (typeof v !== 'string' || NOT_RESPONSE_HEADERS.has(key)) continue;
    if (keepExisting && hasHeader(out, prefix + key)) continue;
    putHeader(out, prefix + key, v);
    // Every further value is a header line of its own, as grpc-gateway's w.Header().Add.
    const all = md.get(key);
    for (let i = 1; i < all.length; i++)
      if (typeof all[i] === 'string') out.push(prefix + key, all[i] as string);
  }
}

/** The value of `name` (any case) in a flat header list, or undefined. */
export function headerValue(out: readonly string[], name: string): string | undefined {
  for (let i = 0; i < out.length; i += 2) if (sameName(out[i]!, name)) return out[i + 1];
  return undefined;
}

/** Whether a flat header list has `name` (any case). */
export function hasHeader(out: readonly string[], name: string): boolean {
  for (let i = 0; i < out.length; i += 2) if (sameName(out[i]!, name)) return true;
  return false;
}

/** Header names validateHeaderName took (bounded: names come from middlewares and metadata keys). */
const validNames = new Set<string>();
/** A character Node refuses in a header value (its checkInvalidHeaderChar). */
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
/**
 * The values of the last lists that passed, by their header's place in the list (the first
 * PASSED_PLACES headers): most of a call's values are those of the call before at the same place
 * (Content-Type, the meta middleware's fixed three, a timestamp of the same millisecond, a
 * Content-Length), and a value equal to the one that passed there passes without the regular
 * expression. NOT_PASSED marks a place no list filled yet (no value equals it).
 */
const PASSED_PLACES = 16;
const NOT_PASSED = Symbol('not passed');
const passedValues: unknown[] = new Array(PASSED_PLACES).fill(NOT_PASSED);

/**
 * Why `res.writeHead` would refuse a flat header list (the error Node's own checks throw: a name
 * that is not a token, a value with a control character, a `Trailer` header on a body that is not
 * chunked), or undefined when it takes every line. `fixedLength`: the list gives Content-Length.
 * One pass, nothing allocated when the list is fine. Checked before `writeHead` because a
 * `writeHead` that throws has already changed the response: its status message, and on a
 * response with headers set before (`Connection: close` while draining, Koa middleware) some of
 * the list's headers removed or added.
 */
export function headerListError(list: readonly string[], fixedLength: boolean): Error | undefined {
  try {
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i]!;
      // A name Node took once is taken again (most repeat call after call): checked once.
      if (!validNames.has(name)) {
        validateHeaderName(name);
        if (validNames.size < 512) validNames.add(name);
      }
      // An odd list ends in undefined, which Node refuses too. A value of the characters Node
      // takes needs no call of its check; any other gets Node's own error.
      const value = list[i + 1] as string;
      const place = i >> 1;
      if (place >= PASSED_PLACES || value !== passedValues[place]) {
        if (typeof value !== 'string' || INVALID_VALUE_CHAR.test(value))
          validateHeaderValue(name, value);
        if (place < PASSED_PLACES) passedValues[place] = value;
      }
      if (fixedLength && name.length === 7 && sameName(name, 'trailer')) {
        return new Error(
          `response header "${name}" announces trailers, which a response with Content-Length cannot carry`,
        );
      }
    }
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Whether `name` may be Content-Type or Content-Length in some case: the length of one of them
 * and a C first (what raises GatewayHeaders.contentNames).
 */
function mayNameContent(name: string): boolean {
  const n = name.length;
  return (n === 12 || n === 14) && (name[0] === 'C' || name[0] === 'c');
}

/**
 * The middleware's view of a gateway call: request headers from HTTP; response headers collected
 * into `out`, which the gateway hands to the one `res.writeHead` of the call (no `setHeader` per
 * header: its validation and header map cost more than the whole list written at once). The
 * gateway checks the names and values (headerListError) before the head is written.
 */
export class GatewayHeaders implements CallHeaders {
  /** The response headers so far, flat: name, value, name, value… */
  readonly out: string[] = [];
  /**
   * The lengths of the names in `out` up to `folded`, one bit each (bit 31 for 31 and longer): a name whose
   * length no name there has is not there, and is appended without comparing it to any (the
   * meta middleware's six headers, one after the other). What the gateway appends to `out`
   * itself is folded in on the next `set`.
   */
  private lengths = 0;
  private folded = 0;
  /**
   * False while no name in `out` can be Content-Type or Content-Length (in any case): the gateway
   * then appends those two without a search. Raised by `set` and `setHttp` for a name of their
   * length that starts with a C, and by the gateway for headers it adds from elsewhere (a
   * rejection's); metadata never becomes either (NOT_RESPONSE_HEADERS).
   */
  contentNames = false;

  constructor(
    private readonly req: IncomingHttpHeaders,
    private readonly prefix: string,
  ) {}

  get(name: string): string | undefined {
    const v = this.req[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }

  set(name: string, value: string): void {
    const full = this.prefix === '' ? name : this.prefix + name;
    // putHeader(out, full, value), without a search when no name in `out` has the length of
    // `full` (written out: a call per header costs more than the search it spares).
    const out = this.out;
    let lengths = this.lengths;
    for (let i = this.folded; i < out.length; i += 2) {
      const n = out[i]!.length;
      // biome-ignore lint/complexity/useMathMinMax: no call per header on this path
      lengths |= 1 << (n < 31 ? n : 31);
    }
    if (mayNameContent(full)) this.contentNames = true;
    const n = full.length;
    // biome-ignore lint/complexity/useMathMinMax: no call per header on this path
    const bit = 1 << (n < 31 ? n : 31);
    if ((lengths & bit) === 0) out.push(full, value);
    else putHeader(out, full, value);
    this.lengths = lengths | bit;
    this.folded = out.length;
  }

  /** An HTTP header under its own name, in either style (CORS, security headers, cookies). */
  setHttp(name: string, value: string): void {
    if (mayNameContent(name)) this.contentNames = true;
    putHeader(this.out, name, value);
  }
}
