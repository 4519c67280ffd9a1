import { CallContext, type CallBodySource, type CallInfo } from './call.js';

/** A call for unit tests: request headers in, response headers (plain and `setHttp`) out. */
export function testCall(
  info: Partial<CallInfo> & { apiMethod?: string },
  request: Record<string, string> = {},
  body?: string,
): { call: CallContext; out: Map<string, string>; metadataOut: Map<string, string> } {
  const out = new Map<string, string>();
  const metadataOut = new Map<string, string>();
  const lower = new Map(Object.entries(request).map(([k, v]) => [k.toLowerCase(), v]));
  const full: CallInfo = {
    operation: `${info.apiMethod ?? 'GET'} ${info.apiPath ?? '/v1/x'}`,
    remoteAddr: '127.0.0.1:1',
    apiMethod: 'GET',
    apiPath: '/v1/x',
    apiProtocol: 'HTTP/1.1',
    apiQuery: '',
    userAgent: 'test',
    ...info,
  };
  const call = new CallContext(full, {
    get: (name) => lower.get(name.toLowerCase()),
    set: (name, value) => void metadataOut.set(`Grpc-Metadata-${name}`, value),
    setHttp: (name, value) => void out.set(name, value),
  });
  if (body !== undefined) {
    const source: CallBodySource = { readBody: () => Promise.resolve(Buffer.from(body)) };
    call.bodySource = source;
  }
  return { call, out, metadataOut };
}

/** A native gRPC call's info. */
export const grpcInfo: Partial<CallInfo> = {
  operation: '/api.v1.Greeter/Hello',
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
  grpcType: 'UnaryServer',
};
