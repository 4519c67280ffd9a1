import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TRANSPORTS,
  answersRpcStatus,
  isBuiltin,
  speaksGrpc,
  startTarget,
  type Answer,
  type Target,
  type TransportName,
} from './transports.js';

/**
 * What the middleware suite's files share (ARCHITECTURE.md §9): each middleware, checked once per
 * transport from one parameterised suite: native gRPC, the REST gateway, its server-sent events
 * and its WebSocket binding, gRPC-Web and Connect on a grpc entry, an httpserver entry's routes,
 * the built-in routes (`/svc/v1/info`) of both entries, and the grpc entry called through
 * svcboot's own client entries (grpcclient over native gRPC, httpclient over the gateway).
 * Expected statuses are the references': gRPC's code numbers, and grpc-gateway's
 * HTTPStatusFromCode (runtime/errors.go) for HTTP. The suite is cut into files by concern
 * (observability, auth, guards, browser, errors-and-encoding) so that vitest runs them side by side.
 */

export const GRPC_CODE = {
  OK: 0,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  Internal: 13,
  Unauthenticated: 16,
} as const;
export type Code = keyof typeof GRPC_CODE;

/** grpc-gateway's HTTPStatusFromCode. */
export const HTTP_OF: Readonly<Record<Code, number>> = {
  OK: 200,
  InvalidArgument: 400,
  DeadlineExceeded: 504,
  PermissionDenied: 403,
  ResourceExhausted: 429,
  Internal: 500,
  Unauthenticated: 401,
};

/** The answer's status as the transport shows `code`. */
export function expectStatus(t: TransportName, a: Answer, code: Code): void {
  if (speaksGrpc(t))
    expect([a.grpcCode, a.grpcMessage]).toEqual([GRPC_CODE[code], expect.any(String)]);
  else expect(a.httpStatus).toBe(HTTP_OF[code]);
}

/**
 * A header the middleware set: under its own name, or on a gateway call as grpc-gateway forwards
 * metadata (`Grpc-Metadata-<name>`).
 */
export function header(t: TransportName, a: Answer, name: string): string | undefined {
  const n = name.toLowerCase();
  return (
    a.headers.get(n) ?? (answersRpcStatus(t) ? a.headers.get(`grpc-metadata-${n}`) : undefined)
  );
}

export const ALL = TRANSPORTS;
/** Transports whose calls reach the app's handler (not the built-in routes). */
export const APP = TRANSPORTS.filter((t) => !isBuiltin(t));

/**
 * The transports of `list` a case applies to. A transport in `notOn` gets, instead of the case, a
 * skipped test under the case's title that says why it does not apply (so a reader of the run
 * sees every transport, each run or skipped with its reason).
 */
export function applying(
  title: string,
  list: readonly TransportName[],
  notOn: Partial<Record<TransportName, string>>,
): TransportName[] {
  for (const [t, reason] of Object.entries(notOn) as Array<[TransportName, string]>)
    if (list.includes(t))
      describe(title.replace('%s', t), () => {
        it.skip(`does not apply: ${reason}`, () => undefined);
      });
  return list.filter((t) => notOn[t] === undefined);
}

/** Starts one target per describe block and stops it after. */
export function target(
  t: TransportName,
  middleware: string,
  options?: Parameters<typeof startTarget>[2],
): () => Target {
  let started: Target | undefined;
  beforeAll(async () => {
    started = await startTarget(t, middleware, options);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return () => started!;
}
