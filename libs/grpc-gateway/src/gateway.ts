import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { CallContext, CallInfo } from '@svcboot/entry-core';
import {
  endCall,
  HTTP_REQUEST,
  RPC_METHOD,
  setHttpHeader,
  startCall,
  type CallChain,
} from '@svcboot/entry-core/call';
import protobuf from 'protobufjs';
import type { WebSocket, WebSocketServer } from 'ws';
import { codeName, type RestGateway } from '@svcboot/grpc-server/protocol';

/**
 * ws, loaded on the first WebSocket call rather than at start (most gateways never see one):
 * synchronously, so the upgrade is handled in the same turn as before.
 */
const requireWs = createRequire(import.meta.url);
let wsLib: typeof import('ws') | undefined;
const wsModule = (): typeof import('ws') => (wsLib ??= requireWs('ws') as typeof import('ws'));
import type { GatewayStatus } from './exchange.js';
import { DEFAULT_MAX_JSON_DEPTH, checkJsonDepth } from '@svcboot/grpc-server/protocol';
import { fieldMaskFromBody } from './fieldmask.js';
import { DEFAULT_MAX_QUERY_PARAMS, parseQueryInto } from './goparse.js';
import {
  JsonInputError,
  PlainValue,
  fullName,
  jsonName,
  jsonToPlain,
  messageToJson,
  type MarshalOptions,
} from '@svcboot/grpc-server/protocol';
import { ParamError, applyQuery, setPathVariable } from './params.js';
import { anyToJson, detailsFromMetadata, type TypeResolver } from '@svcboot/grpc-server/protocol';
import { WsRequest, WsResponse } from './websocket.js';
import { Exchange, type ExchangeHost } from './exchange.js';
import type { GatewayOptions } from './options.js';
import { MultipartParser, multipartBoundary, readMultipart } from './multipart.js';
import { GatewayRejection, isForm, peerOf, readBody } from './request.js';
import { uploadTarget } from './upload.js';
import type { GatewayRoute, HttpBodyFields } from './route.js';
import {
  fastMessage,
  flatFieldsOf,
  flatJson,
  responsePlanOf,
  type ResponsePlan,
} from './response-fast.js';
import { generatedFlatMessage, generatedFlatOf } from './response-generated.js';

/**
 * The REST gateway: matches a request to a binding, turns path, query and body into the request
 * message, runs the entry's middleware chain once and calls the same handler the gRPC server
 * calls, in process; answers with canonical JSON or a google.rpc.Status body.
 */
export class Gateway implements ExchangeHost, RestGateway {
  private readonly byMethod = new Map<string, GatewayRoute[]>();
  readonly routes: GatewayRoute[] = [];

  /** How many HTTP bindings it serves. */
  get routeCount(): number {
    return this.routes.length;
  }

  /** The marshal options with Any values resolved in every loaded proto (protojson's registry). */
  private readonly marshal: MarshalOptions;

  constructor(
    private readonly chain: CallChain,
    readonly options: GatewayOptions,
    /** The entry's user interceptors (`entry.addInterceptor`): gateway calls go through them too. */
    readonly interceptors: readonly ServerInterceptor[] = [],
  ) {
    const marshal: MarshalOptions = { ...options.marshal };
    marshal.anyToJson = (url, value) => anyToJson(url, value, this.resolveType, marshal);
    this.marshal = marshal;
  }

  /** The roots of the routes' types: an error detail's Any is resolved in them. */
  private readonly roots = new Set<protobuf.Root>();
  /** Finds a message type by full name in the loaded protos (for Any values). */
  readonly resolveType: TypeResolver = (name) => {
    for (const root of this.roots) {
      const t = root.lookup(name);
      if (t instanceof protobuf.Type) return t;
    }
    return undefined;
  };

  add(route: GatewayRoute): void {
    this.routes.push(route);
    this.roots.add(route.requestType.root as protobuf.Root);
    const list = this.byMethod.get(route.binding.method) ?? [];
    list.push(route);
    // Prefer templates with more literal text: /v1/shelves:search before /v1/{name}.
    list.sort((a, b) => b.template.literalWeight - a.template.literalWeight);
    this.byMethod.set(route.binding.method, list);
  }

  /**
   * Serves the request when a binding matches; false otherwise (the caller answers 404, or 501 /
   * 405 when `methodsFor` finds the path bound for other methods). As grpc-gateway's ServeMux: a
   * POST with a form body (`application/x-www-form-urlencoded`) may name its method in
   * `X-HTTP-Method-Override`, and falls back to a GET binding of its path.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    let method = req.method ?? 'GET';
    const fallback =
      method === 'POST' &&
      !this.options.disablePathLengthFallback &&
      req.headers['content-type'] === 'application/x-www-form-urlencoded';
    if (fallback && !this.options.disableHttpMethodOverride) {
      const override = req.headers['x-http-method-override'];
      if (typeof override === 'string' && override !== '') method = override.toUpperCase();
    }
    if (this.serveFirst(this.byMethod.get(method), pathname, query, req, res)) return true;
    if (fallback && method !== 'GET')
      return this.serveFirst(this.byMethod.get('GET'), pathname, query, req, res);
    return method === 'OPTIONS' && this.preflight(pathname, query, req, res);
  }

  /** gRPC-Web methods by gRPC path, for their preflights only (see webPreflightRoutes). */
  private readonly webPreflights = new Map<string, GatewayRoute>();

  /** Lets a CORS preflight to a gRPC-Web method's path (`route`'s template) reach the chain. */
  addWebPreflight(route: GatewayRoute): void {
    this.webPreflights.set(route.binding.pathTemplate, route);
  }

  /**
   * A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) to a path with no
   * OPTIONS binding: the chain runs for the binding it asks about (else any binding of the path),
   * as an OPTIONS call, so that the cors middleware can answer it; when none does, the answer is
   * what a path bound only for other methods gets (501, or 405 with Allow). False when it is no
   * preflight or no binding has the path.
   */
  private preflight(
    pathname: string,
    query: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): boolean {
    const asked = req.headers['access-control-request-method'];
    if (req.headers.origin === undefined || typeof asked !== 'string') return false;
    let found = matchIn(this.byMethod.get(asked.toUpperCase()), pathname);
    for (const list of this.byMethod.values()) found ??= matchIn(list, pathname);
    if (found !== undefined) {
      this.serve(found.route, found.values, pathname, query, req, res, 'bound');
      return true;
    }
    // A gRPC-Web method's path: unanswered, it is still the 404 it was.
    const web = this.webPreflights.get(pathname);
    if (web === undefined) return false;
    this.serve(web, [], pathname, query, req, res, 'web');
    return true;
  }

  private serveFirst(
    list: GatewayRoute[] | undefined,
    pathname: string,
    query: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): boolean {
    if (!list) return false;
    for (let i = 0; i < list.length; i++) {
      const route = list[i]!;
      const values = route.template.match(pathname);
      if (values) {
        this.serve(route, values, pathname, query, req, res);
        return true;
      }
    }
    return false;
  }

  /** Open WebSocket calls, closed (1001) by `closeWebSockets` at shutdown. */
  private readonly sockets = new Set<WebSocket>();
  private wss: WebSocketServer | undefined;

  /**
   * An HTTP/1.1 `Upgrade: websocket` request: when a bidi- or server-streaming binding's template matches
   * its path (whatever the binding's HTTP method), the connection becomes that call (see
   * websocket.ts); false otherwise, the socket untouched.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return false;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    for (const list of this.byMethod.values()) {
      for (const route of list) {
        const def = route.method.definition;
        // Bidi and server-streaming rules: a server stream's request message comes from the
        // path, the query and (a rule with a body) the frames up to the client's empty frame.
        if (!def.responseStream) continue;
        const values = route.template.match(pathname);
        if (!values) continue;
        this.wss ??= new (wsModule().WebSocketServer)({
          noServer: true,
          maxPayload: this.options.maxBodyBytes,
        });
        this.wss.handleUpgrade(req, socket, head, (ws) => {
          this.sockets.add(ws);
          ws.once('close', () => this.sockets.delete(ws));
          // A protocol error (a frame over maxPayload, a bad frame): ws closes the connection
          // itself (1009, 1002, ...), and the close cancels the call.
          ws.on('error', () => undefined);
          const wsReq = new WsRequest(req.headers, req.socket, url, ws);
          const wsRes = new WsResponse(ws);
          this.serve(
            route,
            values,
            pathname,
            query,
            wsReq as unknown as IncomingMessage,
            wsRes as unknown as ServerResponse,
          );
        });
        return true;
      }
    }
    return false;
  }

  /** Closes open WebSocket calls with 1001 (going away). */
  closeWebSockets(): void {
    for (const ws of this.sockets) ws.close(1001, 'server shutting down');
  }

  /** The HTTP methods with a binding whose template matches `pathname` (for 501 / 405 answers). */
  methodsFor(pathname: string): string[] {
    const out: string[] = [];
    for (const [method, list] of this.byMethod) {
      if (list.some((r) => r.template.match(pathname) !== undefined)) out.push(method);
    }
    return out;
  }

  /** google.rpc.Status as JSON: details from the status's `grpc-status-details-bin`, each an Any with `@type`. */
  statusJson(status: GatewayStatus): { code: number; message: string; details: unknown[] } {
    return {
      code: status.code,
      message: status.message,
      details: detailsFromMetadata(status.trailer, this.resolveType, this.marshal),
    };
  }

  private serve(
    route: GatewayRoute,
    values: string[],
    pathname: string,
    query: string,
    req: IncomingMessage,
    res: ServerResponse,
    /** A CORS preflight for a binding of another method (`bound`) or a gRPC-Web method (`web`). */
    preflight?: 'bound' | 'web',
  ): void {
    const ua = req.headers['user-agent'] ?? '';
    const socket = req.socket;
    const r = route.info;
    // route.info's keys in its order, written out: cheaper than spreading it and adding the rest.
    const info: CallInfo = {
      operation: r.operation,
      remoteAddr: peerOf(socket),
      apiMethod: r.apiMethod,
      apiPath: r.apiPath,
      apiProtocol: req.httpVersion === '1.1' ? 'HTTP/1.1' : `HTTP/${req.httpVersion}`,
      apiQuery: query,
      userAgent: ua,
      restPath: r.restPath,
    };
    const x = new Exchange(this, route, values, query, req, res, info, preflight);
    x.ctx.set(RPC_METHOD, route.rpc);
    x.ctx.set(HTTP_REQUEST, {
      method: preflight !== undefined ? 'OPTIONS' : route.binding.method,
      path: pathname,
      scheme: (socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      userAgent: ua,
    });
    x.clientDeadline(req.headers['grpc-timeout']);
    startCall(this.chain, x.ctx, x);
  }

  /** Every `before` let the call through (the call driver's `proceed`). @internal */
  admitted(x: Exchange): void {
    if (x.preflight !== undefined)
      this.notBound(x, x.req, x.ctx.get(HTTP_REQUEST)!.path, x.preflight);
    else this.proceed(x, x.route, x.req);
  }

  /**
   * A preflight no middleware answered: what the router answers a method the path has no binding
   * for (a gRPC-Web method's path: 404, as it has no binding at all).
   */
  private notBound(
    x: Exchange,
    req: IncomingMessage,
    pathname: string,
    preflight: 'bound' | 'web',
  ): void {
    if (!req.complete) req.resume();
    if (preflight === 'web') {
      x.fail(new GatewayRejection(5, 'Not Found', 404));
      return;
    }
    const use405 = this.options.methodNotAllowed405 === true;
    if (use405) setHttpHeader(x.ctx, 'Allow', this.methodsFor(pathname).join(', '));
    x.fail(new GatewayRejection(12, 'Method Not Allowed', use405 ? 405 : 501));
  }

  /** The call once every middleware's `before` let it through: deadline, body, dispatch. */
  private proceed(x: Exchange, route: GatewayRoute, req: IncomingMessage): void {
    if (!x.startDeadline()) return;
    if (route.method.definition.requestStream) {
      x.streamRequests();
      return;
    }
    if (route.binding.body && this.upload(x, route, req)) return;
    // A middleware may have read the body already (call.body()).
    if (route.binding.body) {
      (x.ctx.bodyRequested ?? readBody(req, this.options.maxBodyBytes)).then(
        (body) => x.dispatch(body, undefined),
        (err: unknown) => x.fail(err),
      );
    } else if (
      (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') &&
      isForm(req)
    ) {
      // grpc-gateway's request.ParseForm: a POST/PUT/PATCH form body gives parameters too.
      (x.ctx.bodyRequested ?? readBody(req, this.options.maxBodyBytes)).then(
        (form) => x.dispatch(undefined, form),
        (err: unknown) => x.fail(err),
      );
    } else {
      if (!req.complete) req.resume();
      x.dispatch(undefined, undefined);
    }
  }

  /**
   * A `multipart/form-data` body: read through the streaming parser within `maxUploadBytes`, each
   * part checked against the rule's body as its headers arrive (upload.ts), then dispatched as the
   * body. False when the body is not multipart.
   */
  private upload(x: Exchange, route: GatewayRoute, req: IncomingMessage): boolean {
    let parser: MultipartParser;
    let target: ReturnType<typeof uploadTarget>;
    try {
      const boundary = multipartBoundary(req.headers['content-type']);
      if (boundary === undefined) return false;
      target = uploadTarget(route);
      parser = new MultipartParser(
        boundary,
        (head) => target.check(head),
        this.options.maxQueryParams ?? DEFAULT_MAX_QUERY_PARAMS,
      );
    } catch (err) {
      if (!req.complete) req.resume();
      x.fail(err);
      return true;
    }
    const read = x.ctx.bodyRequested
      ? x.ctx.bodyRequested.then((body) => {
          parser.write(body);
          return parser.end();
        })
      : readMultipart(req, parser, this.options.maxUploadBytes ?? this.options.maxBodyBytes);
    read.then(
      (parts) => {
        let body: unknown;
        try {
          body = target.build(parts);
        } catch (err) {
          x.fail(err);
          return;
        }
        x.dispatch(undefined, undefined, body);
      },
      (err: unknown) => x.fail(err),
    );
    return true;
  }

  /** Runs the middleware's `after` for a finished gateway call. */
  finish(ctx: CallContext, status: GatewayStatus): void {
    if (status.code !== 0 && ctx.error === undefined) ctx.error = status.message;
    endCall(ctx, codeName(status.code));
  }

  /**
   * The request message, built in grpc-gateway's order: the body (and, on a PATCH, the FieldMask
   * from its keys), then path variables, then query parameters (and form fields). @internal
   */
  requestMessage(
    route: GatewayRoute,
    values: string[],
    query: string,
    raw: Buffer | undefined,
    form: Buffer | undefined,
    contentType?: string,
    /** A multipart upload's parts as the body's JSON tree (upload.ts). */
    uploaded?: unknown,
  ): unknown {
    const { binding, requestType } = route;
    const vars = route.template.variables;
    // The handler gets exactly what a gRPC client's bytes would give it.
    if (
      vars.length === 0 &&
      (raw === undefined || raw.length === 0) &&
      form === undefined &&
      uploaded === undefined &&
      (!query || binding.body === '*')
    ) {
      return route.emptyRequestMessage();
    }
    const discard = this.options.discardUnknown;
    let json: unknown = {};
    const hb = route.httpBodyRequest;
    if (uploaded !== undefined) json = atBody(route, uploaded);
    else if (hb && raw !== undefined && raw.length > 0) {
      // The raw bytes and their media type, not JSON (google.api.HttpBody as a request body).
      json = atBody(route, new PlainValue({ [hb.contentType]: contentType ?? '', [hb.data]: raw }));
    } else if (raw !== undefined && raw.length > 0) {
      let parsed: unknown;
      const text = raw.toString('utf8');
      try {
        // Before JSON.parse builds anything: deep nesting costs far more than its size.
        checkJsonDepth(
          text,
          this.options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
          'the request body',
        );
      } catch (err) {
        throw new GatewayRejection(3, (err as Error).message, 400);
      }
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw new GatewayRejection(
          3,
          `request body is not valid JSON: ${(err as Error).message}`,
          400,
        );
      }
      if (binding.body === '*') {
        // A well-known request type (google.protobuf.Duration…) takes its own JSON form.
        if (
          !fullName(requestType).startsWith('google.protobuf.') &&
          (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        ) {
          throw new JsonInputError(`request body must be a JSON object`);
        }
        json = parsed;
      } else {
        json = atBody(route, parsed);
        const mask = route.fieldMaskField;
        const bodyType = route.bodyField!.resolvedType;
        if (mask && bodyType instanceof protobuf.Type) {
          (json as Record<string, unknown>)[mask.name] = new PlainValue({
            paths: fieldMaskFromBody(bodyType, parsed),
          });
        }
      }
    }
    if (
      json !== null &&
      typeof json === 'object' &&
      !Array.isArray(json) &&
      !(json instanceof PlainValue)
    ) {
      const obj = json as Record<string, unknown>;
      for (let i = 0; i < vars.length; i++) setPathVariable(requestType, obj, vars[i]!, values[i]!);
      if ((query || form) && binding.body !== '*') {
        // Parsed once, in one pass; form fields come before the query's values, as in Go's Request.Form.
        const params = new Map<string, string[]>();
        const max = this.options.maxQueryParams ?? DEFAULT_MAX_QUERY_PARAMS;
        const limit = { left: max, max };
        const formError =
          form === undefined ? undefined : parseQueryInto(form.toString('utf8'), params, limit);
        const queryError =
          formError === undefined && query ? parseQueryInto(query, params, limit) : undefined;
        const error = formError ?? queryError;
        if (error) throw new ParamError(error);
        applyQuery(requestType, obj, params, route.filter);
      }
    }
    const plain = jsonToPlain(requestType, json, discard);
    let bytes: Uint8Array;
    try {
      bytes = requestType.encode(requestType.fromObject(plain as Record<string, unknown>)).finish();
    } catch (err) {
      throw new JsonInputError((err as Error).message);
    }
    // The handler gets exactly what a gRPC client's bytes would give it.
    return route.method.definition.requestDeserialize(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
  }

  /** One message of a streamed request body, as the handler gets it. @internal */
  streamedMessage(route: GatewayRoute, json: unknown): unknown {
    const plain = jsonToPlain(route.requestType, json, this.options.discardUnknown);
    let bytes: Uint8Array;
    try {
      bytes = route.requestType
        .encode(route.requestType.fromObject(plain as Record<string, unknown>))
        .finish();
    } catch (err) {
      throw new JsonInputError((err as Error).message);
    }
    return route.method.definition.requestDeserialize(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
  }

  /** A google.api.HttpBody response's content type and bytes. @internal */
  httpBody(
    route: GatewayRoute,
    message: unknown,
    hb: HttpBodyFields,
  ): { contentType: string; data: Buffer } {
    const bytes = route.method.definition.responseSerialize(message);
    const decoded = route.responseType.decode(bytes) as unknown as Record<string, unknown>;
    const data = decoded[hb.data] as Uint8Array | undefined;
    return {
      contentType: String(decoded[hb.contentType] ?? ''),
      data: data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.alloc(0),
    };
  }

  /** The route's response plan (response-fast.ts), worked out on its first response. */
  private planOf(route: GatewayRoute): ResponsePlan | null {
    let plan = route.responsePlan;
    if (plan === undefined)
      plan = route.responsePlan =
        responsePlanOf(route.method.definition, route.responseType) ?? null;
    return plan;
  }

  /**
   * A unary response's body: `JSON.stringify(toJson(route, message), null, indent)`. A flat
   * response type (singular strings, bools and 32-bit integers: response-fast.ts flatFieldsOf)
   * without `response_body` or indentation has its text written field by field, the same bytes
   * without the JSON tree. @internal
   */
  toJsonText(route: GatewayRoute, message: unknown): string {
    const indent = this.options.indent;
    if (!indent && !route.responseField) {
      const plan = this.planOf(route);
      if (plan) {
        let flat = route.responseFlat;
        if (flat === undefined)
          flat = route.responseFlat = flatFieldsOf(plan, this.marshal.useProtoNames) ?? null;
        if (flat) {
          const m = fastMessage(plan, message);
          if (m) return flatJson(flat, m, this.marshal.emitUnpopulated);
        }
      } else {
        let generated = route.generatedFlat;
        if (generated === undefined)
          generated = route.generatedFlat =
            generatedFlatOf(
              route.method.definition,
              route.responseType,
              this.marshal.useProtoNames,
            ) ?? null;
        if (generated) {
          const m = generatedFlatMessage(generated, message);
          if (m) return flatJson(generated.flat, m, this.marshal.emitUnpopulated);
        }
      }
    }
    return JSON.stringify(this.toJson(route, message), null, indent);
  }

  /** A response message as JSON (its `response_body` field when the rule names one). @internal */
  toJson(route: GatewayRoute, message: unknown): unknown {
    // The message a client would decode, without the wire where that is provably the same (response-fast.ts).
    const plan = this.planOf(route);
    const decoded =
      (plan && fastMessage(plan, message)) ??
      (route.responseType.decode(
        route.method.definition.responseSerialize(message),
      ) as unknown as Record<string, unknown>);
    const marshal = this.marshal;
    if (!route.responseField) return messageToJson(route.responseType, decoded, marshal);
    const f = route.responseField;
    const only = messageToJson(
      route.responseType,
      { [f.name]: decoded[f.name] },
      marshal,
    ) as Record<string, unknown>;
    return (
      only[marshal.useProtoNames ? f.name : jsonName(f)] ?? (f.repeated ? [] : f.map ? {} : null)
    );
  }
}

/** `value` where the rule's body goes: the whole request (`*`), or its body field under the field's path. */
function atBody(route: GatewayRoute, value: unknown): unknown {
  if (route.binding.body === '*') return value;
  const json: Record<string, unknown> = {};
  let obj = json;
  const path = route.bodyPath;
  for (let i = 0; i < path.length - 1; i++) obj = obj[path[i]!.name] = {};
  obj[route.bodyField!.name] = value;
  return json;
}

/** The first route of `list` whose template matches `pathname`, with the variables' values. */
function matchIn(
  list: readonly GatewayRoute[] | undefined,
  pathname: string,
): { route: GatewayRoute; values: string[] } | undefined {
  if (!list) return undefined;
  for (const route of list) {
    const values = route.template.match(pathname);
    if (values) return { route, values };
  }
  return undefined;
}
