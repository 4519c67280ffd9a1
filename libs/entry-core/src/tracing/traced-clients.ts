/**
 * The database drivers whose client calls can be traced, as connector packages announce them
 * (entry-kv: ioredis, entry-sql: pg). The tracing package (@svcboot/middleware-trace) owns the
 * OpenTelemetry instrumentations and applies the one for each driver here once an entry traces;
 * a connector therefore depends on no OpenTelemetry package, and an app that traces nothing
 * loads none.
 */

/** One driver module a connector imports, to be patched with its instrumentation when tracing is on. */
export interface TracedClient {
  /** The npm name of the driver (`ioredis`, `pg`): the tracing package picks its instrumentation by it. */
  readonly driver: string;
  /** The driver's module exports as the connector imports them (the object its instrumentation patches). */
  readonly moduleExports: unknown;
}

/** Called with each client announced, those announced before it subscribed included. */
export type TracedClientListener = (client: TracedClient) => void;

const clients: TracedClient[] = [];
const listeners: TracedClientListener[] = [];

/**
 * For connector packages: announces the driver module whose calls get client spans once an entry
 * of this process has the trace middleware on. The same module twice is announced once.
 */
export function registerTracedClient(driver: string, moduleExports: unknown): void {
  if (clients.some((c) => c.driver === driver && c.moduleExports === moduleExports)) return;
  const client: TracedClient = { driver, moduleExports };
  clients.push(client);
  for (const l of listeners) l(client);
}

/** For the tracing package: `listener` gets every client announced, now and later. */
export function onTracedClient(listener: TracedClientListener): void {
  listeners.push(listener);
  for (const c of clients) listener(c);
}
