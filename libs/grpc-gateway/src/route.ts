import type { MethodDefinition } from '@grpc/grpc-js';
import type { CallInfo } from '@svcboot/entry-core';
import type { RpcMethod } from '@svcboot/entry-core/call';
import protobuf from 'protobufjs';
import { grpcTypeOf, rpcMethodOf } from '@svcboot/grpc-server/protocol';
import type { GatewayOptions } from './options.js';
import type { RegisteredMethod } from '@svcboot/grpc-server/protocol';
import { fieldByAnyName, fullName } from '@svcboot/grpc-server/protocol';
import { normalizeFieldPath, unsupportedPathField } from './params.js';
import type { HttpBinding } from '@svcboot/openapi';
import type { FlatField, ResponsePlan } from './response-fast.js';
import type { GeneratedFlat } from './response-generated.js';
import { emptyRequestOf } from './empty-request.js';
import { compileTemplate, type PathTemplate } from './template.js';

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
  /** The CallInfo's fixed part (operation, api*, the binding's template as restPath). */
  info: CallInfo;
  /** The method's RpcMethod, the calls' `RPC_METHOD`. */
  rpc: RpcMethod;
  /** The request's bytes when nothing (path, query, body) sets a field: the common `GET /v1/x`. */
  emptyRequest: Buffer;
  /** What requestDeserialize(emptyRequest) gives, a fresh one each call (empty-request.ts). */
  emptyRequestMessage: () => unknown;
  /** How toJson skips the response's binary round trip (response-fast.ts): null, it cannot; undefined, not yet known. */
  responsePlan?: ResponsePlan | null;
  /** How toJsonText writes a flat response's JSON text directly (response-fast.ts flatJson): null, it cannot; undefined, not yet known. */
  responseFlat?: FlatField[] | null;
  /** How toJsonText writes a flat response of generated code (response-generated.ts): null, it cannot; undefined, not yet known. */
  generatedFlat?: GeneratedFlat | null;
}

/** The fields of a dotted path (`payload.input_value`), each but the last a singular message; undefined when a name is not found. */
export function resolveFieldPath(
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
  // As protoc-gen-grpc-gateway's streaming request funcs: the whole request body is the stream of
  // messages, so a rule with no body (FlowCombination's StreamEmptyRpc) is served like body "*";
  // a body naming a field cannot mean anything here.
  if (def.requestStream && binding.body !== '*' && binding.body !== '')
    throw new Error(
      `${where}: ${method.path} is client- or bidi-streaming; its rule needs body "*" or no body (the request body is the stream of messages)`,
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
    restPath: binding.pathTemplate,
  };
  const rpcMethod = rpcMethodOf(method.path, grpcTypeOf(def.requestStream, def.responseStream));
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
    rpc: rpcMethod,
    emptyRequest,
    emptyRequestMessage: emptyRequestOf(def, emptyRequest),
  };
}

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
