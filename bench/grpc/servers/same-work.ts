/**
 * The per-call work of svcboot's three middlewares, done the way a user would wire it by hand
 * with the libraries they would pick: one pino line per call (to a file, pino's asynchronous
 * destination), a prom-client histogram and counter by method and code, and the six response
 * headers of ARCHITECTURE.md §5.2 (a request id, the app's domain, name and version, the time
 * now and the time the call arrived). The hand-wired peers (grpc-js-wired.ts, koa-wired.ts) and
 * the NestJS interceptors use it.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';

const APP = { name: 'bench-peer', version: '1.0.0', domain: 'local' };

const logger = pino(
  { base: { app: APP.name, version: APP.version, domain: APP.domain, pid: process.pid } },
  pino.destination({
    dest: process.env['EVENTS_FILE'] ?? '/dev/null',
    minLength: 4096,
    sync: false,
  }),
);

export const registry = new Registry();
const elapsed = new Histogram({
  name: 'call_elapsed_seconds',
  help: 'Time to handle a call, in seconds.',
  labelNames: ['method', 'code'],
  registers: [registry],
});
const calls = new Counter({
  name: 'calls_total',
  help: 'Calls handled.',
  labelNames: ['method', 'code'],
  registers: [registry],
});

/** What one call carries from its start to its end. */
export interface CallStart {
  requestId: string;
  receivedIso: string;
  startHr: bigint;
}

/** The request id (the caller's `x-request-id` or a new UUID) and the start times. */
export function startCall(incomingId: string | undefined): CallStart {
  return {
    requestId: incomingId || randomUUID(),
    receivedIso: new Date().toISOString(),
    startHr: process.hrtime.bigint(),
  };
}

/** The six response headers. */
export function responseHeaders(c: CallStart): Record<string, string> {
  return {
    'x-request-id': c.requestId,
    'x-svc-app-domain': APP.domain,
    'x-svc-app-name': APP.name,
    'x-svc-app-unix-time': new Date().toISOString(),
    'x-svc-app-version': APP.version,
    'x-svc-received-time': c.receivedIso,
  };
}

/** The call's line and metrics, once it has its result code. */
export function endCall(
  c: CallStart,
  call: { method: string; path: string; remoteAddr: string; userAgent: string; code: string },
): void {
  const ns = process.hrtime.bigint() - c.startHr;
  const seconds = Number(ns) / 1e9;
  elapsed.observe({ method: call.method, code: call.code }, seconds);
  calls.inc({ method: call.method, code: call.code });
  logger.info(
    {
      requestId: c.requestId,
      startTime: c.receivedIso,
      elapsedNano: Number(ns),
      operation: call.method,
      path: call.path,
      remoteAddr: call.remoteAddr,
      userAgent: call.userAgent,
      resCode: call.code,
    },
    'call',
  );
}

/** Ends the process on SIGTERM after pino has flushed (and so that `--cpu-prof` profiles are written). */
export function exitOnSigterm(close?: () => unknown): void {
  process.once('SIGTERM', () => {
    void Promise.resolve(close?.()).finally(() => {
      logger.flush();
      process.exit(0);
    });
  });
}
