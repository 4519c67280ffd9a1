import { createContextKey, type ContextKey } from './context-key.js';

/**
 * The RPC a call invokes, for a call of a proto method whatever its protocol (native gRPC,
 * gRPC-Web, Connect, the REST gateway) or direction (a client entry's outgoing call). Set by the
 * transport before the chain runs, usually one frozen object per method; read by the prom
 * middleware's `grpc_*` labels, the transport's record payloads and metric families, and spans.
 */
export interface RpcMethod {
  /** `api.v1.Greeter` (`unknown` for a method the entry does not serve). */
  readonly service: string;
  /** `Hello`. */
  readonly method: string;
  /** `UnaryServer`, `ServerStream`, `ClientStream` or `BidiStream`. */
  readonly type: string;
}

/** The call's `RpcMethod`; undefined on a call that is no RPC (an httpserver route, a built-in route). */
export const RPC_METHOD: ContextKey<RpcMethod | undefined> = createContextKey<
  RpcMethod | undefined
>('svcboot.rpcMethod', undefined);
