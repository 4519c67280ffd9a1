import { testCall as kitTestCall } from '@svcboot/testkit/middleware-harness';
import { CallContext, type CallInfo } from '../middleware/call.js';

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
  grpcType: 'UnaryServer',
};
