import type { Registry } from 'prom-client';
import { quote } from '../event/json.js';
import type { CallContext } from './call.js';

/**
 * The API-call payloads a transport writes into each call's record: the `CallInfo`'s `api*` and
 * `userAgent`, and what the transport keeps in its context keys. Built as JSON text (a payload
 * object per call and JSON.stringify over it cost several times more); the logging middleware
 * reuses the previous call's text when `same` says the payloads did not change.
 */
export interface CallPayloads {
  /** The keys, in the order `json` writes them (used when a handler adds payloads of its own). */
  readonly keys: readonly string[];
  /** The payloads as JSON members without braces: `"apiMethod":"GET",…`. */
  json(call: CallContext): string;
  /** The payloads as an object, keys in `keys`' order (when a handler adds payloads of its own). */
  values(call: CallContext): Record<string, string>;
  /** True when every payload of `a` and `b` is the same. */
  same(a: CallContext, b: CallContext): boolean;
}

/**
 * Metric families a transport adds to the prom middleware (e.g. gRPC's `grpc_server_*`), beside
 * the transport-neutral `svc_call_*`. Called on every call: no allocation there (cache label
 * children by operation and code).
 */
export interface TransportMetrics {
  before?(call: CallContext): void;
  after(call: CallContext, seconds: number): void;
}

/**
 * What a transport (entry-grpc, entry-http, …) contributes to the transport-neutral chain: its
 * record payload keys and its own metric families. Core keeps the call model (CallInfo,
 * CallContext), the chain and the record.
 */
export interface CallTransport {
  readonly payloads: CallPayloads;
  /** Creates the transport's families in the entry's registry, when the prom middleware is on. */
  metrics?(registry: Registry): TransportMetrics;
}

/** The payloads every call has: method, path, protocol, query and user agent. */
export const basicCallPayloads: CallPayloads = {
  keys: ['apiMethod', 'apiPath', 'apiProtocol', 'apiQuery', 'userAgent'],
  json: ({ info: i }) =>
    `"apiMethod":${quote(i.apiMethod)},"apiPath":${quote(i.apiPath)},"apiProtocol":${quote(i.apiProtocol)},"apiQuery":${quote(i.apiQuery)},"userAgent":${quote(i.userAgent)}`,
  values: ({ info: i }) => ({
    apiMethod: i.apiMethod,
    apiPath: i.apiPath,
    apiProtocol: i.apiProtocol,
    apiQuery: i.apiQuery,
    userAgent: i.userAgent,
  }),
  same: ({ info: a }, { info: b }) =>
    a.userAgent === b.userAgent &&
    a.apiPath === b.apiPath &&
    a.apiQuery === b.apiQuery &&
    a.apiMethod === b.apiMethod &&
    a.apiProtocol === b.apiProtocol,
};

/** A transport with the basic payloads and no families of its own (plain HTTP). */
export const basicTransport: CallTransport = { payloads: basicCallPayloads };
