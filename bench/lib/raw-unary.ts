import {
  type MethodDefinition,
  makeGenericClientConstructor,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';

const identity = (b: Buffer): Buffer => b;

/**
 * A grpc-js definition of one unary method whose messages are the bytes given both ways (no
 * codec): for a client sending requests encoded once, up front, and a server answering bytes.
 */
export function rawUnaryMethod(path: string): MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

/**
 * A grpc-js client constructor for one unary method whose messages go out and come back as the
 * bytes given (no codec on the client): the benches send requests they encoded once, up front.
 */
export function rawUnaryClient(
  service: string,
  method: string,
  path: string,
): ServiceClientConstructor {
  return makeGenericClientConstructor({ [method]: rawUnaryMethod(path) }, service);
}
