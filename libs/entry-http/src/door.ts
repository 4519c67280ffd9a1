import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  CallContext,
  type CallHeaders,
  type CallInfo,
  type CallChain,
} from '@svcboot/entry-core/internal/middleware/call';
import type { CallRejection } from '@svcboot/entry-core/internal/middleware/rejection';
import { endCall, startCall } from '@svcboot/entry-core/internal/call/driver';
import type { CallAdapter } from '@svcboot/entry-core/internal/call/adapter';
import type { CallAnswer } from '@svcboot/entry-core/internal/middleware/answer';
import {
  errorBody,
  googleStatusName,
  type ErrorModel,
} from '@svcboot/entry-core/internal/middleware/error-model';
import { socketPeer } from '@svcboot/entry-core/internal/http/peer';
import { httpStatusOfRejection } from '@svcboot/entry-core/internal/middleware/rejection';
import {
  SHED_AT_DOOR,
  type LoadShedding,
} from '@svcboot/entry-core/internal/overload/load-shedding';

/**
 * The entry's request listener with load shedding at the door: before Koa builds its context for
 * a request, admission is asked what the signals that need no call say (LoadShedding#shedAtDoor:
 * calls in flight, the turn's lateness, the expected wait of the queue and of the backlog). A
 * call they shed is run through the entry's chain without Koa (its record, `svc_shed_total`, the
 * prom middleware's counts are a shed call's, as before) and refused with the answer Koa would
 * have written: 503, Retry-After, the error model's body. Every other request goes to Koa, whose
 * chain decides as for any call. The entry's own routes (`builtin`) are never shed.
 */
export function shedAtDoor(
  koa: RequestListener,
  chain: CallChain,
  shedding: LoadShedding,
  model: ErrorModel,
  builtin: (method: string, path: string) => boolean,
  /** A middleware failed (not a refusal): logged as the entry logs Koa's errors. */
  onError: (err: unknown) => void,
): RequestListener {
  const answers = new Map<CallRejection, Preformed>();
  const preformed = (rejection: CallRejection): Preformed => {
    let p = answers.get(rejection);
    if (p === undefined) answers.set(rejection, (p = preform(model, rejection)));
    return p;
  };
  return (req, res) => {
    const reason = shedding.shedAtDoor(chain.inFlight);
    if (reason === undefined) return void koa(req, res);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    // An absolute-form target, a fragment: Koa's own parsing decides the path.
    if (path.charCodeAt(0) !== 47 || path.includes('#') || builtin(method, path))
      return void koa(req, res);
    const info: CallInfo = {
      operation: `${method} ${path}`,
      remoteAddr: socketPeer(req.socket),
      apiMethod: method,
      apiPath: path,
      apiProtocol: req.httpVersion === '1.1' ? 'HTTP/1.1' : `HTTP/${req.httpVersion}`,
      apiQuery: q < 0 ? '' : url.slice(q + 1),
      userAgent: rawHeader(req, 'user-agent') ?? '',
      // No route matched (as for a call Koa's chain refused).
      restPath: '',
    };
    const door = new DoorCall(req, res, model, shedding.rejectionOf(reason), onError, preformed);
    const call = new CallContext(info, door);
    call.set(SHED_AT_DOOR, reason);
    const pending = startCall(chain, call, door);
    if (pending === undefined) endCall(call, String(res.statusCode));
    else void pending.finally(() => endCall(call, String(res.statusCode)));
  };
}

/** A shed call's answer made once per reason: its body around the request id, its headers. */
interface Preformed {
  readonly status: number;
  readonly pre: string;
  readonly post: string;
  /** The body's length in bytes, the request id's aside. */
  readonly bytes: number;
  /**
   * The rejection's headers, Content-Type and Content-Length, flat (name, value, …) for writeHead;
   * the last value (Content-Length's) is set per call, right before writeHead reads it (it keeps
   * no reference): no list is made per call.
   */
  readonly headers: string[];
}

/** Where the request id goes in a preformed body (ASCII, no JSON escapes: not in any message). */
const ID_MARK = 'svcboot-request-id-8f3a2c';

function preform(model: ErrorModel, rejection: CallRejection): Preformed {
  const status = httpStatusOfRejection(rejection);
  const json = JSON.stringify(
    errorBody(model, {
      httpStatus: status,
      grpcStatus: googleStatusName(rejection.status),
      message: rejection.message,
      requestId: ID_MARK,
    }),
  );
  const at = json.indexOf(ID_MARK);
  const pre = json.slice(0, at);
  const post = json.slice(at + ID_MARK.length);
  const headers: string[] = [];
  for (const [k, v] of Object.entries(rejection.headers)) headers.push(k, v);
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', '');
  return {
    status,
    pre,
    post,
    bytes: Buffer.byteLength(pre) + Buffer.byteLength(post),
    headers,
  };
}

/**
 * A request header as `header` reads it, from the raw list when it occurs there once (what a shed
 * call reads: User-Agent, X-Request-Id): Node builds `req.headers` from that list on its first
 * read, which a shed call need not pay for. `name` in lower case.
 */
function rawHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let found: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!;
    if (k.length !== name.length || k.toLowerCase() !== name) continue;
    // Twice or more: Node's own rules (joined, or the first kept, by name).
    if (found !== undefined) return header(req, name);
    found = raw[i + 1]!;
  }
  return found === '' ? undefined : found;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  if (v === undefined || v === '') return undefined;
  return Array.isArray(v) ? v.join(', ') : v;
}

/** A call shed at the door: its headers on the raw request and response, its refusal written by hand. */
class DoorCall implements CallHeaders, CallAdapter {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly model: ErrorModel,
    private readonly shed: CallRejection,
    private readonly onError: (err: unknown) => void,
    private readonly preformed: (rejection: CallRejection) => Preformed,
  ) {}

  get(name: string): string | undefined {
    return rawHeader(this.req, name.toLowerCase());
  }
  set(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }
  setHttp(name: string, value: string): void {
    this.set(name, value);
  }

  /** Not reached (load shedding refuses the call at its step); refused as shed all the same. */
  proceed(call: CallContext): void {
    this.refuse(call, this.shed);
  }

  /** An early answer of a middleware before admission (a CORS preflight): its status and headers. */
  answer(_call: CallContext, answer: CallAnswer): void {
    const res = this.res;
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
    res.statusCode = answer.httpStatus;
    res.setHeader('Content-Length', '0');
    res.end();
  }

  /** As the Koa adapter's refusal: the rejection's status and headers, the error model's body. */
  refuse(call: CallContext, rejection: CallRejection): void {
    if (call.error !== undefined && call.error !== rejection) this.onError(call.error);
    else call.error = rejection;
    const res = this.res;
    if (res.headersSent) return;
    if (rejection === this.shed || rejection.source?.middleware === 'loadShedding') {
      // The request id is a UUID or an incoming one of safe characters: no JSON escapes, ASCII.
      const p = this.preformed(rejection);
      const id = call.requestId;
      // writeHead with the headers as a list: as node:http's own fast path (merged with any a
      // middleware set before, e.g. X-Request-Id).
      const headers = p.headers;
      headers[headers.length - 1] = String(p.bytes + id.length);
      res.writeHead(p.status, headers);
      if (this.req.method === 'HEAD') res.end();
      else res.end(p.pre + id + p.post);
      return;
    }
    const httpStatus = httpStatusOfRejection(rejection);
    const body = JSON.stringify(
      errorBody(this.model, {
        httpStatus,
        grpcStatus: googleStatusName(rejection.status),
        message: rejection.message,
        requestId: call.requestId,
      }),
    );
    for (const [k, v] of Object.entries(rejection.headers)) res.setHeader(k, v);
    res.statusCode = httpStatus;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    if (this.req.method === 'HEAD') res.end();
    else res.end(body);
  }
}
