import { testCall as kitTestCall } from '@svcboot/testkit/middleware-harness';
import { CallContext, type CallInfo } from '../middleware/call.js';
import { HTTP_REQUEST, type HttpRequest } from '../call/http-request.js';
import { RPC_METHOD } from '../call/rpc-method.js';

/** A call for unit tests: request headers in, response headers (plain and `setHttp`) out. */
export const testCall = (
  info: Partial<CallInfo>,
  request: Record<string, string> = {},
  body?: string,
): ReturnType<typeof kitTestCall> => kitTestCall({ CallContext }, info, request, body);

/** A native gRPC call's info. */
export const grpcInfo: Partial<CallInfo> = {
  operation: '/api.v1.Greeter/Hello',
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
};

/**
 * A call of the RPC `grpcInfo` names: a native gRPC call, or with `http` one reached over HTTP
 * (the gateway's binding, Connect, gRPC-Web), as the transports set their context keys.
 */
export function rpcCall(
  http?: Partial<HttpRequest>,
  request: Record<string, string> = {},
  info: Partial<CallInfo> = {},
): ReturnType<typeof kitTestCall> {
  const t = testCall({ ...grpcInfo, ...info }, request);
  t.call.set(RPC_METHOD, { service: 'api.v1.Greeter', method: 'Hello', type: 'UnaryServer' });
  if (http !== undefined)
    t.call.set(HTTP_REQUEST, { method: 'GET', path: '', scheme: '', userAgent: '', ...http });
  return t;
}
