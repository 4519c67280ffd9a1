import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Metadata, MethodDefinition, ServerInterceptor } from '@grpc/grpc-js';
import { CallContext, CallRejection, type CallChain, type CallInfo } from '@svcboot/entry-core';
import protobuf from 'protobufjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { grpcTypeOf, plainPeer } from '../call-info.js';
import { codeName, codeOfRejection, httpStatusFromCode } from '../codes.js';
import { attachContext } from '../interceptor.js';
import type { RegisteredMethod } from '../services.js';
import {
  GatewayHeaders,
  addMetadataHeaders,
  headerListError,
  metadataFromHeaders,
  hasHeader,
  putHeader,
} from './headers.js';
import {
  GatewayDuplexCall,
  GatewayReadableCall,
  GatewayUnaryCall,
  GatewayWritableCall,
  statusFromError,
  type GatewayStatus,
  type StreamBase,
} from './fake-call.js';
import { DEFAULT_MAX_JSON_DEPTH, checkJsonDepth } from './json-depth.js';
import { JsonValueSplitter } from './json-stream.js';
import {
  admittedBase,
  runIntercepted,
  runInterceptedStream,
  sentStatusOf,
  type Admitted,
  type InterceptedTarget,
  type SentStatus,
} from './intercepted.js';
import { fieldMaskFromBody } from './fieldmask.js';
import { DEFAULT_MAX_QUERY_PARAMS, parseQueryInto } from './goparse.js';
import {
  JsonInputError,
  PlainValue,
  fieldByAnyName,
  fullName,
  jsonName,
  jsonToPlain,
  messageToJson,
  type MarshalOptions,
} from './json.js';
import {
  ParamError,
  applyQuery,
  normalizeFieldPath,
  setPathVariable,
  unsupportedPathField,
} from './params.js';
import {
  UnresolvableAny,
  anyToJson,
  detailsFromMetadata,
  type TypeResolver,
} from './rpc-status.js';
import type { HttpBinding } from './rules.js';
import { compileTemplate, type PathTemplate } from './template.js';
import { decodeGrpcTimeout } from './timeout.js';
import { WsRequest, WsResponse } from './websocket.js';

const OK: GatewayStatus = { code: 0, message: '' };

/** grpc-js's handler shapes, as the gateway calls them with its stand-in calls. */
type UnaryHandler = (
  call: GatewayUnaryCall,
  callback: (err: unknown, value?: unknown, trailer?: Metadata) => void,
) => void;
type StreamHandler = (call: GatewayWritableCall) => void;
type ReadableHandler = (
  call: GatewayReadableCall,
  callback: (err: unknown, value?: unknown, trailer?: Metadata) => void,
) => void;
type DuplexHandler = (call: GatewayDuplexCall) => void;

/** Where a streamed request's decoded messages go: the handler's call, or the bottom of the interceptor stack. */
interface StreamSink {
  deliver(message: unknown): void;
  end(): void;
  cancel(): void;
}

export interface GatewayOptions {
  marshal: MarshalOptions;
  indent: string;
  discardUnknown: boolean;
  svcStyle: boolean;
  maxBodyBytes: number;
  /** How deeply request JSON (bodies, streamed messages) may nest objects and arrays; 400 beyond. Default 100. */
  maxJsonDepth?: number;
  /** The most query parameters (and form fields) a request may have; 400 beyond. Default 1000. */
  maxQueryParams?: number;
  /** A path bound only for other methods: 405 with `Allow` instead of grpc-gateway's 501 (code 12). */
  methodNotAllowed405?: boolean;
  /** grpc-gateway's WithDisablePathLengthFallback: no POST (form) → GET fallback. */
  disablePathLengthFallback?: boolean;
  /** grpc-gateway's WithDisableHTTPMethodOverride: `X-HTTP-Method-Override` ignored. */
  disableHttpMethodOverride?: boolean;
  /** protoc-gen-grpc-gateway's allow_patch_feature: a PATCH fills its FieldMask from the body's keys. */
  allowPatchFeature?: boolean;
}

/** One HTTP binding ready to serve. */
export interface GatewayRoute {
  binding: HttpBinding;
  template: PathTemplate;
  method: RegisteredMethod;
  requestType: protobuf.Type;
  responseType: protobuf.Type;
  /** The request field bound to the body when `body` names one (the last of a nested path). */
  bodyField: protobuf.Field | undefined;
  /** The fields from the request down to bodyField (`payload.input_value`: two). */
  bodyPath: protobuf.Field[];
  responseField: protobuf.Field | undefined;
  /** Top-level request fields bound by path or body (the OpenAPI document leaves them out of the query). */
  boundRoots: Set<string>;
  /** Field paths (proto names) bound by path or body: query parameters under them are ignored. */
  filter: string[][];
  /** The request's only FieldMask field, on a PATCH whose body is a field (allow_patch_feature). */
  fieldMaskField: protobuf.Field | undefined;
  /** The body's target is a google.api.HttpBody: it takes the raw request body and its Content-Type. */
  httpBodyRequest: HttpBodyFields | undefined;
  /** The response is a google.api.HttpBody (no response_body): written as its raw `data` with its `content_type`. */
  httpBodyResponse: HttpBodyFields | undefined;
  info: CallInfo;
  /** The request's bytes when nothing (path, query, body) sets a field: the common `GET /v1/x`. */
  emptyRequest: Buffer;
}

/** The fields of a dotted path (`payload.input_value`), each but the last a singular message; undefined when a name is not found. */
function resolveFieldPath(
  type: protobuf.Type,
  path: string,
): { fields: protobuf.Field[]; error?: string } {
  const fields: protobuf.Field[] = [];
  let t: protobuf.Type = type;
  const names = path.split('.');
  for (let i = 0; i < names.length; i++) {
    const f = fieldByAnyName(t, names[i]!);
    if (!f) return { fields, error: `"${names[i]}" is not a field of ${fullName(t)}` };
    fields.push(f);
    if (i === names.length - 1) break;
    if (!(f.resolvedType instanceof protobuf.Type) || f.repeated || f.map)
      return { fields, error: `"${names[i]}" is not a singular message field of ${fullName(t)}` };
    t = f.resolvedType;
  }
  return { fields };
}

/** The names of a google.api.HttpBody's fields as this root spells them. */
export interface HttpBodyFields {
  contentType: string;
  data: string;
}

function httpBodyFields(type: protobuf.Type | undefined | null): HttpBodyFields | undefined {
  if (!(type instanceof protobuf.Type) || fullName(type) !== 'google.api.HttpBody')
    return undefined;
  const contentType = fieldByAnyName(type, 'content_type');
  const data = fieldByAnyName(type, 'data');
  return contentType && data ? { contentType: contentType.name, data: data.name } : undefined;
}

export function buildRoute(
  binding: HttpBinding,
  method: RegisteredMethod,
  root: protobuf.Root,
  options: Pick<GatewayOptions, 'allowPatchFeature'> = {},
): GatewayRoute {
  // Every refusal names the RPC, the rule and why (grpc-gateway's generator refuses the same rules).
  const where = `${binding.source}: rule ${binding.method} ${binding.pathTemplate}${binding.body ? ` (body "${binding.body}")` : ''} of ${method.path}`;
  const template = compileTemplate(binding.pathTemplate, where);
  const def = method.definition as MethodDefinition<unknown, unknown> & { requestType?: unknown };
  if (def.requestStream && binding.body !== '*')
    throw new Error(
      `${where}: ${method.path} is client- or bidi-streaming; its rule needs body "*" (the request body is the stream of messages)`,
    );
  const service = root.lookupService(method.service);
  const rpc = service.methods[method.name];
  if (!rpc) throw new Error(`${where}: service ${method.service} has no method ${method.name}`);
  const requestType = rpc.resolvedRequestType ?? root.lookupType(rpc.requestType);
  const responseType = rpc.resolvedResponseType ?? root.lookupType(rpc.responseType);
  const boundRoots = new Set<string>();
  const filter: string[][] = [];
  for (const v of template.variables) {
    const { fields, error } = resolveFieldPath(requestType, v);
    if (error) throw new Error(`${where}: path variable "${v}": ${error}`);
    const leaf = fields[fields.length - 1]!;
    if (fields.length === 1) {
      const why = unsupportedPathField(leaf);
      if (why) throw new Error(`${where}: path variable "${v}" cannot be bound: ${why}`);
    }
    boundRoots.add(fields[0]!.name);
    filter.push([...normalizeFieldPath(requestType, v.split('.'))]);
  }
  let bodyField: protobuf.Field | undefined;
  let bodyPath: protobuf.Field[] = [];
  if (binding.body && binding.body !== '*') {
    const { fields, error } = resolveFieldPath(requestType, binding.body);
    if (error) throw new Error(`${where}: body "${binding.body}": ${error}`);
    bodyPath = fields;
    bodyField = fields[fields.length - 1];
    boundRoots.add(fields[0]!.name);
    filter.push(fields.map((f) => f.name));
  }
  let fieldMaskField: protobuf.Field | undefined;
  if ((options.allowPatchFeature ?? true) && binding.method === 'PATCH' && bodyField) {
    const masks = requestType.fieldsArray.filter(
      (f) =>
        f.resolvedType instanceof protobuf.Type &&
        fullName(f.resolvedType) === 'google.protobuf.FieldMask',
    );
    if (masks.length === 1) fieldMaskField = masks[0];
  }
  let responseField: protobuf.Field | undefined;
  if (binding.responseBody) {
    responseField = fieldByAnyName(responseType, binding.responseBody);
    if (!responseField)
      throw new Error(
        `${where}: response_body "${binding.responseBody}" is not a field of ${responseType.fullName.slice(1)}`,
      );
  }
  const info: CallInfo = {
    operation: method.path,
    remoteAddr: '',
    apiMethod: 'POST',
    apiPath: method.path,
    apiProtocol: 'HTTP/1.1',
    apiQuery: '',
    userAgent: '',
    grpcService: method.service,
    grpcMethod: method.name,
    grpcType: grpcTypeOf(def.requestStream, def.responseStream),
    gwMethod: binding.method,
    gwPath: '',
    gwScheme: 'http',
    gwUserAgent: '',
    restPath: binding.pathTemplate,
  };
  const httpBodyRequest =
    binding.body === '*'
      ? httpBodyFields(requestType)
      : bodyField
        ? httpBodyFields(bodyField.resolvedType as protobuf.Type | null)
        : undefined;
  const httpBodyResponse = responseField ? undefined : httpBodyFields(responseType);
  const empty = requestType.encode(requestType.create({})).finish();
  const emptyRequest = Buffer.from(empty.buffer, empty.byteOffset, empty.byteLength);
  return {
    binding,
    template,
    method,
    requestType,
    responseType,
    bodyField,
    bodyPath,
    responseField,
    boundRoots,
    filter,
    fieldMaskField,
    httpBodyRequest,
    httpBodyResponse,
    info,
    emptyRequest,
  };
}

/** Thrown for a request the gateway rejects before the handler: carries the gRPC code and HTTP status. */
class GatewayRejection extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus: number,
  ) {
    super(message);
  }
}

/** A form body, as Go's ParseForm recognises one (media type, parameters allowed). */
function isForm(req: IncomingMessage): boolean {
  const ct = req.headers['content-type'];
  if (ct === undefined) return false;
  const semi = ct.indexOf(';');
  return (
    (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/x-www-form-urlencoded'
  );
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? -1);
  if (declared > limit)
    return Promise.reject(
      new GatewayRejection(
        8,
        `request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
        413,
      ),
    );
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new GatewayRejection(8, `request body exceeds the limit of ${limit} bytes`, 413));
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Where a connection's `ip:port` is kept once worked out: keep-alive connections carry many calls. */
const PEER = Symbol('svcboot.gateway.peer');

function peerOf(socket: Socket): string {
  const s = socket as Socket & { [PEER]?: string };
  let peer = s[PEER];
  if (peer === undefined) {
    const address = socket.remoteAddress;
    peer = plainPeer(`${address ?? ''}:${socket.remotePort ?? ''}`);
    if (address !== undefined) s[PEER] = peer;
  }
  return peer;
}

/**
 * The REST gateway: matches a request to a binding, turns path, query and body into the request
 * message, runs the entry's middleware chain once and calls the same handler the gRPC server
 * calls, in process; answers with canonical JSON or a google.rpc.Status body.
 */
export class Gateway {
  private readonly byMethod = new Map<string, GatewayRoute[]>();
  readonly routes: GatewayRoute[] = [];

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
    return false;
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
   * An HTTP/1.1 `Upgrade: websocket` request: when a bidi-streaming binding's template matches
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
        if (!def.requestStream || !def.responseStream) continue;
        const values = route.template.match(pathname);
        if (!values) continue;
        this.wss ??= new WebSocketServer({ noServer: true, maxPayload: this.options.maxBodyBytes });
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
      grpcService: r.grpcService,
      grpcMethod: r.grpcMethod,
      grpcType: r.grpcType,
      gwMethod: r.gwMethod,
      gwPath: pathname,
      gwScheme: (socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      gwUserAgent: ua,
      restPath: r.restPath,
    };
    const x = new Exchange(this, route, values, query, req, res, info);
    try {
      this.chain.before(x.ctx);
    } catch (err) {
      if (!(err instanceof CallRejection)) throw err;
      if (!req.complete) req.resume();
      x.reject(err);
      return;
    }
    const rawTimeout = req.headers['grpc-timeout'];
    if (rawTimeout !== undefined) {
      const timeout = Array.isArray(rawTimeout) ? rawTimeout.join(',') : rawTimeout;
      const ms = decodeGrpcTimeout(timeout);
      if (ms === undefined) {
        if (!req.complete) req.resume();
        x.fail(new GatewayRejection(3, `invalid grpc-timeout: ${timeout}`, 400));
        return;
      }
      if (ms !== 0) x.startDeadline(ms);
    }
    if (route.method.definition.requestStream) {
      x.streamRequests();
      return;
    }
    if (route.binding.body) {
      readBody(req, this.options.maxBodyBytes).then(
        (body) => x.dispatch(body, undefined),
        (err: unknown) => x.fail(err),
      );
    } else if (
      (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') &&
      isForm(req)
    ) {
      // grpc-gateway's request.ParseForm: a POST/PUT/PATCH form body gives parameters too.
      readBody(req, this.options.maxBodyBytes).then(
        (form) => x.dispatch(undefined, form),
        (err: unknown) => x.fail(err),
      );
    } else {
      if (!req.complete) req.resume();
      x.dispatch(undefined, undefined);
    }
  }

  /** Runs the middleware's `after` for a finished gateway call. */
  finish(ctx: CallContext, status: GatewayStatus): void {
    ctx.resCode = codeName(status.code);
    if (status.code !== 0) ctx.error = status.message;
    this.chain.after(ctx);
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
  ): unknown {
    const { binding, requestType } = route;
    const vars = route.template.variables;
    // The handler gets exactly what a gRPC client's bytes would give it.
    if (
      vars.length === 0 &&
      (raw === undefined || raw.length === 0) &&
      form === undefined &&
      (!query || binding.body === '*')
    ) {
      return route.method.definition.requestDeserialize(route.emptyRequest);
    }
    const discard = this.options.discardUnknown;
    let json: unknown = {};
    const hb = route.httpBodyRequest;
    if (hb && raw !== undefined && raw.length > 0) {
      // The raw bytes and their media type, not JSON (google.api.HttpBody as a request body).
      const body = new PlainValue({ [hb.contentType]: contentType ?? '', [hb.data]: raw });
      if (binding.body === '*') json = body;
      else {
        const path = route.bodyPath;
        let obj = json as Record<string, unknown>;
        for (let i = 0; i < path.length - 1; i++)
          obj = obj[path[i]!.name] = {} as Record<string, unknown>;
        obj[route.bodyField!.name] = body;
      }
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
        const path = route.bodyPath;
        let obj = json as Record<string, unknown>;
        for (let i = 0; i < path.length - 1; i++)
          obj = obj[path[i]!.name] = {} as Record<string, unknown>;
        obj[route.bodyField!.name] = parsed;
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

  /** A response message as JSON (its `response_body` field when the rule names one). @internal */
  toJson(route: GatewayRoute, message: unknown): unknown {
    const bytes = route.method.definition.responseSerialize(message);
    const decoded = route.responseType.decode(bytes) as unknown as Record<string, unknown>;
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

const JSON_TYPE = 'application/json';
const NEWLINE = Buffer.from('\n');
const NDJSON_TYPE = 'application/x-ndjson';

/**
 * One gateway call from matching to its response: builds the request message, hands the handler a
 * grpc-js-like call, collects the response headers (the middleware's, the handler's metadata and
 * trailers) and writes them with the status line in one `res.writeHead`, then reports the outcome
 * to the middleware once. A class with methods rather than closures, since one is made per request.
 */
class Exchange implements StreamBase {
  readonly ctx: CallContext;
  readonly peer: string;
  readonly path: string;
  request: unknown;
  private readonly headers: GatewayHeaders;
  private readonly svc: boolean;
  /** The outcome went to the middleware: nothing more is written or reported. */
  private settled = false;
  private call: GatewayUnaryCall | GatewayWritableCall | undefined;
  /** The bottom of the user's interceptor stack, when the entry has interceptors. */
  private stack: { cancel(): void } | undefined;
  /** The call's deadline (ms since the epoch) from `Grpc-Timeout`; Infinity without one. */
  deadline = Infinity;
  private timer: NodeJS.Timeout | undefined;
  /** Trailer metadata to send as HTTP trailers (the request said `TE: trailers`), flat name/value list. */
  private trailers: string[] | undefined;

  constructor(
    private readonly gateway: Gateway,
    private readonly route: GatewayRoute,
    private readonly values: string[],
    private readonly query: string,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    info: CallInfo,
  ) {
    this.svc = gateway.options.svcStyle;
    this.headers = new GatewayHeaders(req.headers, this.svc ? '' : 'Grpc-Metadata-');
    this.ctx = new CallContext(info, this.headers);
    this.peer = info.remoteAddr;
    this.path = route.method.path;
  }

  metadata(): Metadata {
    const ip = this.req.socket.remoteAddress ?? '';
    const md = metadataFromHeaders(
      this.req.headers,
      this.svc,
      ip.startsWith('::ffff:') ? ip.slice(7) : ip,
    );
    attachContext(md, this.ctx);
    return md;
  }

  onMetadata(md: Metadata): void {
    addMetadataHeaders(this.headers.out, md, this.svc, false);
  }

  /** A request rejected before the handler (too big, bad JSON, badly typed values). */
  fail(err: unknown): void {
    if (this.settled) return;
    let status: GatewayStatus;
    if (err instanceof GatewayRejection) status = { code: err.code, message: err.message };
    else if (err instanceof JsonInputError || err instanceof ParamError)
      status = { code: 3, message: err.message };
    else status = statusFromError(err);
    this.finish(
      this.writeError(status, err instanceof GatewayRejection ? err.httpStatus : undefined),
    );
  }

  /**
   * A middleware refused the call: grpc-gateway's error answer for the rejection's code (HTTP
   * status from the code, a google.rpc.Status body), with the rejection's headers; its
   * `WWW-Authenticate`, if it has one, stands instead of the gateway's.
   */
  reject(err: CallRejection): void {
    const out = this.headers.out;
    for (const name of Object.keys(err.headers)) putHeader(out, name, err.headers[name]!);
    this.finish(this.writeError({ code: codeOfRejection(err.status), message: err.message }));
  }

  /**
   * A `Grpc-Timeout` deadline: at it a call still running is cancelled (its AbortSignal aborts)
   * and answered 504 DeadlineExceeded, as grpc-gateway's expired context answers.
   */
  startDeadline(ms: number): void {
    this.deadline = Date.now() + ms;
    // Beyond setTimeout's range (~24.8 days) the call simply has no timer.
    if (ms <= 2_147_483_647) this.timer = setTimeout(() => this.expire(), Math.max(0, ms));
  }

  private expire(): void {
    this.timer = undefined;
    if (this.settled) return;
    const status: GatewayStatus = { code: 4, message: 'context deadline exceeded' };
    if (this.res.headersSent) {
      this.res.end(`${JSON.stringify({ error: this.gateway.statusJson(status) })}\n`);
      this.finish(status);
    } else this.finish(this.writeError(status));
    // Answered first: whatever the handler does on hearing of the cancellation comes too late.
    this.stack?.cancel();
    this.call?.cancel();
  }

  dispatch(body: Buffer | undefined, form: Buffer | undefined): void {
    if (this.settled) return;
    const { gateway, route } = this;
    try {
      this.request = gateway.requestMessage(
        route,
        this.values,
        this.query,
        body,
        form,
        route.httpBodyRequest ? this.req.headers['content-type'] : undefined,
      );
    } catch (err) {
      this.fail(err);
      return;
    }
    if (gateway.interceptors.length > 0) this.intercepted();
    else if (route.method.definition.responseStream) this.serverStream();
    else this.unary();
  }

  /**
   * A client- or bidi-streaming call: the request body is a stream of JSON values (newline-
   * delimited or concatenated), each handed to the handler as it arrives, as grpc-gateway's
   * generated handlers feed `stream.Send`; the answer is a unary reply or an NDJSON stream.
   */
  streamRequests(): void {
    const def = this.route.method.definition;
    const bidi = def.responseStream;
    this.res.once('close', () => this.closedEarly());
    const sink =
      this.gateway.interceptors.length > 0 ? this.interceptedStreamSink() : this.directStreamSink();
    const splitter = new JsonValueSplitter(
      this.gateway.options.maxBodyBytes,
      this.gateway.options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    );
    const decoder = new StringDecoder('utf8');
    const req = this.req;
    let failed = false;
    const feed = (values: () => unknown[]): boolean => {
      if (failed) return false;
      try {
        for (const v of values()) sink.deliver(this.gateway.streamedMessage(this.route, v));
        return true;
      } catch (err) {
        failed = true;
        req.resume();
        const message = err instanceof Error ? err.message : String(err);
        if (bidi && !(err instanceof RangeError)) {
          // bidi-streaming-request-func: a value that does not decode ends the sending side only.
          sink.end();
          return false;
        }
        // client-streaming-request-func: a request that does not decode ends the call with InvalidArgument.
        this.fail(
          err instanceof RangeError
            ? new GatewayRejection(8, message, 413)
            : new GatewayRejection(3, `cannot decode a request message: ${message}`, 400),
        );
        sink.cancel();
        return false;
      }
    };
    req.on('data', (chunk: Buffer) => {
      feed(() => splitter.push(decoder.write(chunk)));
    });
    req.once('end', () => {
      if (feed(() => splitter.end(decoder.end()))) sink.end();
    });
  }

  /** Without interceptors: the handler's call takes the messages directly. */
  private directStreamSink(): StreamSink {
    const def = this.route.method.definition;
    const handler = this.route.method.handler;
    const call = def.responseStream ? new GatewayDuplexCall(this) : new GatewayReadableCall(this);
    this.call = call;
    const sink: StreamSink = {
      deliver: (m) => call.push(m),
      end: () => call.push(null),
      cancel: () => call.cancel(),
    };
    if (call instanceof GatewayDuplexCall) {
      call.once('error', (err: unknown) => this.streamFailed(err));
      call.once('finish', () => this.streamEnded(call.trailer));
    }
    if (!handler) {
      const unimplemented = {
        code: 12,
        details: `method ${this.route.method.path} is not implemented`,
      };
      if (def.responseStream) this.streamFailed(unimplemented);
      else this.reply(unimplemented);
      return sink;
    }
    try {
      if (call instanceof GatewayDuplexCall) (handler as unknown as DuplexHandler)(call);
      else
        (handler as unknown as ReadableHandler)(call, (err, value, trailer) =>
          this.reply(err, value, trailer),
        );
    } catch (err) {
      if (def.responseStream) this.streamFailed(err);
      else this.reply(err);
    }
    return sink;
  }

  /**
   * Through the user's interceptors, as grpc-js runs a client- or bidi-streaming HTTP/2 call: the
   * handler starts once the metadata has passed them, reads the messages they hand up, and its
   * answer goes back down through them.
   */
  private interceptedStreamSink(): StreamSink {
    const def = this.route.method.definition;
    const bidi = def.responseStream;
    const handler = this.route.method.handler;
    let response: unknown;
    let handlerCall: GatewayReadableCall | GatewayDuplexCall | undefined;
    const target: InterceptedTarget = {
      peer: this.peer,
      request: undefined,
      metadata: () => this.metadata(),
      onMetadata: (md) => this.onMetadata(md),
      onMessage: (msg) => {
        if (bidi) this.onMessage(msg);
        else response = msg;
      },
      onStatus: (st) => this.interceptedStatus(st, bidi, response),
    };
    const method = {
      path: this.path,
      requestStream: true,
      responseStream: bidi,
      requestDeserialize: def.requestDeserialize,
      responseSerialize: def.responseSerialize,
    };
    const base = runInterceptedStream(this.gateway.interceptors, method, target, {
      admit: (a) => {
        if (!handler) {
          a.top.sendStatus({
            code: 12,
            details: `method ${this.route.method.path} is not implemented`,
            metadata: null,
          });
          return;
        }
        attachContext(a.metadata, this.ctx);
        const callBase: StreamBase = {
          metadata: () => a.metadata,
          request: undefined,
          peer: this.peer,
          path: this.path,
          deadline: this.deadline,
          onMetadata: (md) => a.top.sendMetadata(md),
          onMessage: (msg) => a.top.sendMessage(msg, () => undefined),
          startRead: () => a.top.startRead(),
        };
        if (bidi) {
          const c = new GatewayDuplexCall(callBase);
          handlerCall = c;
          this.call = c;
          c.once('error', (err: unknown) => a.top.sendStatus(sentStatusOf(err)));
          c.once('finish', () =>
            a.top.sendStatus({ code: 0, details: 'OK', metadata: c.trailer ?? null }),
          );
          (handler as unknown as DuplexHandler)(c);
        } else {
          const c = new GatewayReadableCall(callBase);
          handlerCall = c;
          this.call = c;
          (handler as unknown as ReadableHandler)(c, (err, value, trailer) => {
            if (err) a.top.sendStatus(sentStatusOf(err));
            else
              a.top.sendMessage(value, () =>
                a.top.sendStatus({ code: 0, details: 'OK', metadata: trailer ?? null }),
              );
          });
        }
      },
      onMessage: (msg) => handlerCall?.push(msg),
      onEnd: () => handlerCall?.push(null),
      onCancel: () => handlerCall?.cancel(),
    });
    this.stack = base;
    return {
      deliver: (m) => base.deliver(m),
      end: () => base.endRequests(),
      cancel: () => base.cancel(),
    };
  }

  /** A status that reached the bottom of the interceptor stack: the end of the call. */
  private interceptedStatus(st: SentStatus, stream: boolean, response: unknown): void {
    const failure =
      st.code === 0
        ? undefined
        : { code: st.code, details: st.details, metadata: st.metadata ?? undefined };
    if (stream) {
      if (failure) this.streamFailed(failure);
      else this.streamEnded(st.metadata ?? undefined);
    } else if (failure) this.reply(failure);
    else this.reply(null, response, st.metadata ?? undefined);
  }

  /**
   * Through the user's interceptors, as grpc-js runs an HTTP/2 call: the handler is called with
   * what they hand on, and its answer goes back down through them to the HTTP response.
   */
  private intercepted(): void {
    const def = this.route.method.definition;
    const stream = def.responseStream;
    let response: unknown;
    const target: InterceptedTarget = {
      peer: this.peer,
      request: this.request,
      metadata: () => this.metadata(),
      onMetadata: (md) => this.onMetadata(md),
      onMessage: (msg) => {
        if (stream) this.onMessage(msg);
        else response = msg;
      },
      onStatus: (s) => {
        const failure =
          s.code === 0
            ? undefined
            : { code: s.code, details: s.details, metadata: s.metadata ?? undefined };
        if (stream) {
          if (failure) this.streamFailed(failure);
          else this.streamEnded(s.metadata ?? undefined);
        } else if (failure) this.reply(failure);
        else this.reply(null, response, s.metadata ?? undefined);
      },
    };
    const method = {
      path: this.path,
      requestStream: false,
      responseStream: stream,
      requestDeserialize: def.requestDeserialize,
      responseSerialize: def.responseSerialize,
    };
    this.stack = runIntercepted(this.gateway.interceptors, method, target, (a) =>
      this.admit(a, stream),
    );
    if (!this.settled) this.res.once('close', () => this.closedEarly());
  }

  /** The interceptors let the call through: the handler runs, its sends go down the stack. */
  private admit(a: Admitted, stream: boolean): void {
    const handler = this.route.method.handler;
    if (!handler) {
      a.top.sendStatus({
        code: 12,
        details: `method ${this.route.method.path} is not implemented`,
        metadata: null,
      });
      return;
    }
    attachContext(a.metadata, this.ctx);
    if (!stream) {
      const call = new GatewayUnaryCall(
        admittedBase(a, this.peer, this.path, undefined, this.deadline),
      );
      this.call = call;
      (handler as unknown as UnaryHandler)(call, (err, value, trailer) => {
        if (err) a.top.sendStatus(sentStatusOf(err));
        else
          a.top.sendMessage(value, () =>
            a.top.sendStatus({ code: 0, details: 'OK', metadata: trailer ?? null }),
          );
      });
      return;
    }
    const call = new GatewayWritableCall(
      admittedBase(
        a,
        this.peer,
        this.path,
        (msg) => a.top.sendMessage(msg, () => undefined),
        this.deadline,
      ),
    );
    this.call = call;
    call.once('error', (err: unknown) => a.top.sendStatus(sentStatusOf(err)));
    call.once('finish', () =>
      a.top.sendStatus({ code: 0, details: 'OK', metadata: call.trailer ?? null }),
    );
    (handler as unknown as StreamHandler)(call);
  }

  private unary(): void {
    const call = new GatewayUnaryCall(this);
    this.call = call;
    const handler = this.route.method.handler;
    if (!handler) {
      this.reply({ code: 12, details: `method ${this.route.method.path} is not implemented` });
      return;
    }
    try {
      (handler as unknown as UnaryHandler)(call, (err, value, trailer) =>
        this.reply(err, value, trailer),
      );
    } catch (err) {
      this.reply(err);
    }
    // Most handlers answer at once; only a call still open needs to hear of the client leaving
    // (the response cannot close while the handler runs synchronously).
    if (!this.settled) this.res.once('close', () => this.closedEarly());
  }

  /**
   * Trailer metadata: with `TE: trailers` in the request, HTTP trailers (`Grpc-Trailer-<key>`, plain
   * names in svc style); without it grpc-gateway sends none, and the svc style adds them to the
   * headers where no header metadata has the name (a trailer never overwrites a header).
   */
  private addTrailer(md: Metadata): void {
    const te = this.req.headers.te;
    if (typeof te === 'string' && te.toLowerCase().includes('trailers'))
      addMetadataHeaders((this.trailers ??= []), md, this.svc, true);
    else if (this.svc) addMetadataHeaders(this.headers.out, md, true, true, true);
  }

  /** The unary handler's callback. */
  private reply(err: unknown, value?: unknown, trailer?: Metadata): void {
    if (this.settled) return;
    if (err) {
      const status = statusFromError(err);
      if (status.trailer) this.addTrailer(status.trailer);
      this.finish(this.writeError(status));
      return;
    }
    if (trailer) this.addTrailer(trailer);
    const hb = this.route.httpBodyResponse;
    if (hb) {
      // HTTPBodyMarshaler: the body's bytes with its content type.
      const { contentType, data } = this.gateway.httpBody(this.route, value, hb);
      this.finish(this.respond(200, contentType, data, OK));
      return;
    }
    let body: string;
    try {
      body = JSON.stringify(
        this.gateway.toJson(this.route, value),
        null,
        this.gateway.options.indent,
      );
    } catch (e) {
      this.finish(
        this.writeError({
          code: 13,
          message: `cannot serialize the response: ${(e as Error).message}`,
        }),
      );
      return;
    }
    this.finish(this.respond(200, JSON_TYPE, body, OK));
  }

  /** Server streaming as newline-delimited JSON: `{"result":…}` per message, `{"error":…}` on failure. */
  private serverStream(): void {
    const call = new GatewayWritableCall(this);
    this.call = call;
    this.res.once('close', () => this.closedEarly());
    call.once('error', (err: unknown) => this.streamFailed(err));
    call.once('finish', () => this.streamEnded(call.trailer));
    const handler = this.route.method.handler;
    if (!handler) {
      this.streamFailed({
        code: 12,
        details: `method ${this.route.method.path} is not implemented`,
      });
      return;
    }
    try {
      (handler as unknown as StreamHandler)(call);
    } catch (err) {
      this.streamFailed(err);
    }
  }

  /** A message the streaming handler wrote: the head goes out with the first one. */
  onMessage(msg: unknown): void {
    if (this.settled) return;
    const hb = this.route.httpBodyResponse;
    let line: string | Buffer;
    let contentType = NDJSON_TYPE;
    if (hb) {
      // ForwardResponseStream with HttpBody: each message's bytes, then the "\n" delimiter; the
      // first message's content type is the response's.
      const body = this.gateway.httpBody(this.route, msg, hb);
      line = Buffer.concat([body.data, NEWLINE]);
      contentType = body.contentType;
    } else line = `${JSON.stringify({ result: this.gateway.toJson(this.route, msg) })}\n`;
    const res = this.res;
    if (!res.headersSent) {
      const out = this.headers.out;
      putHeader(out, 'Content-Type', contentType);
      const failed = this.writeHead(200, out, false);
      if (failed) {
        this.call?.cancel();
        this.finish(failed);
        return;
      }
    }
    res.write(line);
  }

  private streamEnded(trailer: Metadata | undefined): void {
    if (this.settled) return;
    const res = this.res;
    let status = OK;
    if (!res.headersSent) {
      // No message: in svc style trailers still fit in the head (grpc-gateway sends none for a stream).
      const out = this.headers.out;
      if (trailer && this.svc) addMetadataHeaders(out, trailer, true, true, true);
      putHeader(out, 'Content-Type', NDJSON_TYPE);
      putHeader(out, 'Content-Length', '0');
      status = this.writeHead(200, out, true) ?? OK;
    }
    if (!res.writableEnded) res.end();
    this.finish(status);
  }

  private streamFailed(err: unknown): void {
    if (this.settled) return;
    const status = statusFromError(err);
    if (!this.res.headersSent) {
      if (status.trailer && this.svc)
        addMetadataHeaders(this.headers.out, status.trailer, true, true, true);
      this.finish(this.writeError(status));
      return;
    }
    let line: string;
    try {
      line = `${JSON.stringify({ error: this.gateway.statusJson(status) })}\n`;
    } catch {
      line = `${JSON.stringify({ error: { code: status.code, message: status.message, details: [] } })}\n`;
    }
    this.res.end(line);
    this.finish(status);
  }

  /** The response closed: a call still open is cancelled (a stream reports the client gone). */
  private closedEarly(): void {
    if (this.settled || this.res.writableFinished) return;
    this.stack?.cancel();
    this.call?.cancel();
    // A stream ends here; a unary call still ends with the handler's answer.
    if (this.route.method.definition.responseStream)
      this.finish({ code: 1, message: 'the client went away' });
  }

  private finish(status: GatewayStatus): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.gateway.finish(this.ctx, status);
  }

  /**
   * A google.rpc.Status body with the HTTP status of its code (or the one given), as
   * DefaultHTTPErrorHandler writes it: details as Any values, `WWW-Authenticate` for
   * Unauthenticated; a detail whose type no loaded proto has cannot be written (as protojson
   * cannot), which gives grpc-gateway's 500 "failed to marshal error message".
   */
  private writeError(status: GatewayStatus, httpStatus?: number): GatewayStatus {
    const res = this.res;
    if (res.headersSent) {
      res.end();
      return status;
    }
    let body: string;
    try {
      body = JSON.stringify(this.gateway.statusJson(status), null, this.gateway.options.indent);
    } catch (err) {
      if (!(err instanceof UnresolvableAny)) throw err;
      this.trailers = undefined;
      return this.respond(500, JSON_TYPE, MARSHAL_FALLBACK, status);
    }
    if (status.code === 16 && !hasHeader(this.headers.out, 'WWW-Authenticate'))
      putHeader(this.headers.out, 'WWW-Authenticate', status.message);
    return this.respond(httpStatus ?? httpStatusFromCode(status.code), JSON_TYPE, body, status);
  }

  /**
   * The whole response: status line and every header in one `writeHead` (Content-Length given,
   * so Node sends the body as is rather than chunked), then the body. Returns the status to
   * report: `status`, or Internal when Node refused a header.
   */
  private respond(
    httpStatus: number,
    contentType: string,
    body: string | Buffer,
    status: GatewayStatus,
  ): GatewayStatus {
    const out = this.headers.out;
    putHeader(out, 'Content-Type', contentType);
    const trailers = this.trailers;
    if (trailers !== undefined && trailers.length > 0) {
      // HTTP trailers need a chunked body: announced in `Trailer`, sent after it.
      const names: string[] = [];
      const pairs: Array<[string, string]> = [];
      for (let i = 0; i < trailers.length; i += 2) {
        names.push(trailers[i]!);
        pairs.push([trailers[i]!, trailers[i + 1]!]);
      }
      putHeader(out, 'Trailer', names.join(', '));
      const failed = this.writeHead(httpStatus, out, false);
      if (failed) return failed;
      const refused = headerListError(trailers, false);
      if (refused === undefined) this.res.addTrailers(pairs);
      this.res.end(body);
      return status;
    }
    putHeader(out, 'Content-Length', String(Buffer.byteLength(body)));
    const failed = this.writeHead(httpStatus, out, true);
    if (failed) return failed;
    this.res.end(body);
    return status;
  }

  /**
   * `res.writeHead(httpStatus, reason, headers)` (`fixedLength`: the headers give Content-Length);
   * undefined when written. The reason phrase is always given: `writeHead` otherwise keeps a
   * status message set earlier on `res` (by Koa middleware, say), which would give `404 OK`. The list is checked before `writeHead` is called,
   * since a `writeHead` that throws has already changed `res`. When a header is refused (a
   * middleware or handler set a value with a control character, say), the client gets
   * `500 Internal Server Error` with a google.rpc.Status body and only Content-Type and
   * Content-Length besides what was on `res` before (none of the list), and the returned Internal
   * status is what the middleware should hear.
   */
  private writeHead(
    httpStatus: number,
    headers: string[],
    fixedLength: boolean,
  ): GatewayStatus | undefined {
    const refused = headerListError(headers, fixedLength);
    if (refused === undefined) {
      try {
        this.res.writeHead(httpStatus, STATUS_CODES[httpStatus] ?? 'unknown', headers);
        return undefined;
      } catch (err) {
        // Not expected once the list passed the check; answered the same way.
        return this.headFailed(err);
      }
    }
    return this.headFailed(refused);
  }

  /** The 500 for a head Node refused (see writeHead). */
  private headFailed(err: unknown): GatewayStatus {
    const res = this.res;
    const status: GatewayStatus = {
      code: 13,
      message: `cannot write the gateway response's headers: ${err instanceof Error ? err.message : String(err)}`,
    };
    if (res.headersSent) {
      res.end();
      return status;
    }
    const body = JSON.stringify(
      { code: status.code, message: status.message, details: [] },
      null,
      this.gateway.options.indent,
    );
    res.writeHead(500, 'Internal Server Error', [
      'Content-Type',
      JSON_TYPE,
      'Content-Length',
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
    return status;
  }
}

/** grpc-gateway's answer when the error itself cannot be marshalled. */
const MARSHAL_FALLBACK = '{"code": 13, "message": "failed to marshal error message"}';

/** A synthetic binding for an RPC without one: `POST /<pkg>.<Service>/<Method>` with body `*`. */
export function unboundBinding(method: RegisteredMethod): HttpBinding {
  return {
    selector: `${method.service}.${method.name}`,
    method: 'POST',
    pathTemplate: method.path,
    body: '*',
    responseBody: '',
    source: `unbound method ${method.path}`,
  };
}
