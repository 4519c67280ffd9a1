import type { CallPayloads } from '@svcboot/entry-core/call';
import { jsonString as quote } from '@svcboot/entry-core/toolkit';

/**
 * A gRPC call's record payloads (a grpc entry's gRPC or gateway call, a grpcclient's outbound call): the basic ones plus grpc* and gw*, in
 * key order, built as text.
 */
export const grpcCallPayloads: CallPayloads = {
  keys: [
    'apiMethod',
    'apiPath',
    'apiProtocol',
    'apiQuery',
    'grpcMethod',
    'grpcService',
    'grpcType',
    'gwMethod',
    'gwPath',
    'gwScheme',
    'gwUserAgent',
    'userAgent',
  ],
  json: (i) =>
    `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)}` +
    `,"grpcMethod":${quote(i.grpcMethod ?? '')},"grpcService":${quote(i.grpcService ?? '')},"grpcType":${quote(i.grpcType ?? '')}` +
    `,"gwMethod":${quote(i.gwMethod ?? '')},"gwPath":${quote(i.gwPath ?? '')},"gwScheme":${quote(i.gwScheme ?? '')}` +
    `,"gwUserAgent":${quote(i.gwUserAgent ?? '')},"userAgent":${quote(i.userAgent)}`,
  // Mostly the very same strings: cheap.
  same: (a, b) =>
    a.userAgent === b.userAgent &&
    a.apiPath === b.apiPath &&
    a.apiQuery === b.apiQuery &&
    a.apiMethod === b.apiMethod &&
    a.apiProtocol === b.apiProtocol &&
    a.grpcMethod === b.grpcMethod &&
    a.grpcService === b.grpcService &&
    a.grpcType === b.grpcType &&
    a.gwMethod === b.gwMethod &&
    a.gwPath === b.gwPath &&
    a.gwScheme === b.gwScheme &&
    a.gwUserAgent === b.gwUserAgent,
};
