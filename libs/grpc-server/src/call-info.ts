import type { CallInfo } from '@svcboot/entry-core';
import type { RpcMethod } from '@svcboot/entry-core/internal/call/rpc-method';

export type GrpcType = 'UnaryServer' | 'ServerStream' | 'ClientStream' | 'BidiStream';

export function grpcTypeOf(requestStream: boolean, responseStream: boolean): GrpcType {
  if (requestStream) return responseStream ? 'BidiStream' : 'ClientStream';
  return responseStream ? 'ServerStream' : 'UnaryServer';
}

/** `/api.v1.Greeter/Hello` → service `api.v1.Greeter`, method `Hello`. */
export function splitPath(path: string): { service: string; method: string } {
  const slash = path.lastIndexOf('/');
  return { service: path.slice(1, slash), method: path.slice(slash + 1) };
}

/** A method's `RpcMethod` (the `RPC_METHOD` context key's value), made once per method. */
export function rpcMethodOf(path: string, type: GrpcType): RpcMethod {
  const { service, method } = splitPath(path);
  return Object.freeze({ service, method, type });
}

/** The `RpcMethod` of every call to a method the server does not have (bounded metric labels). */
export const UNKNOWN_RPC: RpcMethod = Object.freeze({
  service: 'unknown',
  method: 'unknown',
  type: 'UnaryServer',
});

/**
 * The per-method part of a gRPC call's CallInfo; the adapter adds the per-call fields (and sets
 * the method's `rpcMethodOf` as the call's `RPC_METHOD`).
 */
export function grpcCallInfo(path: string): CallInfo {
  return {
    operation: path,
    remoteAddr: '',
    apiMethod: 'POST',
    apiPath: path,
    apiProtocol: 'HTTP/2',
    apiQuery: '',
    userAgent: '',
    // grpc-js's server sends its trailers through Node's HTTP/2 too (CallInfo.answerAfterTurn).
    answerAfterTurn: true,
  };
}
