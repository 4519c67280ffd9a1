import { makeGenericClientConstructor, type ServiceClientConstructor } from '@grpc/grpc-js';

const identity = (b: Buffer): Buffer => b;

/**
 * A grpc-js client constructor for one unary method whose messages go out and come back as the
 * bytes given (no codec on the client): the benches send requests they encoded once, up front.
 */
export function rawUnaryClient(
  service: string,
  method: string,
  path: string,
): ServiceClientConstructor {
  return makeGenericClientConstructor(
    {
      [method]: {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    service,
  );
}
