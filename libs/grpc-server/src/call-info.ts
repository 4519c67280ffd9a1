import type { CallInfo } from '@svcboot/entry-core';

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

/** The per-method part of a gRPC call's CallInfo; the adapter adds the per-call fields. */
export function grpcCallInfo(path: string, type: GrpcType): CallInfo {
  const { service, method } = splitPath(path);
  return {
    operation: path,
    remoteAddr: '',
    apiMethod: 'POST',
    apiPath: path,
    apiProtocol: 'HTTP/2',
    apiQuery: '',
    userAgent: '',
    grpcService: service,
    grpcMethod: method,
    grpcType: type,
  };
}
