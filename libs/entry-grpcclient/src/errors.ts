import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** entry-grpcclient's errors (codes documented in README.md, "Errors"). */
export const grpcClientErrorCatalogue = {
  SVC_GRPCCLIENT_BAD_TARGET: {
    when: '`target` is not `dns:///host:port`, `static:///ip:port,…`, `unix:/path` or `host:port`',
    fix: 'write the target in one of those forms; the message says what is wrong with it',
    message: (configPath: string, why: string) => `${configPath}.target: ${why}`,
  },
  SVC_GRPCCLIENT_NOT_CONNECTED: {
    when: 'an `eager` client could not connect within `connectTimeoutMs` at bootstrap',
    fix: 'check that the backend is up at `target`, or leave `eager` off to connect at the first call',
    message: (configPath: string, target: string, state: string) =>
      `${configPath}: cannot connect to ${target} at bootstrap (channel ${state.toLowerCase()}); check that the backend is up, or set eager: false`,
  },
  SVC_GRPCCLIENT_NO_REGISTRY: {
    when: '`metricsEntry` names an entry without a metrics registry (not a `grpc` or `httpserver` entry)',
    fix: 'name a grpc or httpserver entry of this app (with `prom.enabled` to serve /metrics), or leave it empty',
    message: (configPath: string, name: string) =>
      `${configPath}.metricsEntry: entry "${name}" has no metrics registry; name a grpc or httpserver entry`,
  },
  SVC_GRPCCLIENT_CLOSED: {
    when: 'a client was asked for after the app shut the entry down',
    fix: 'make outbound calls only while the app runs',
    message: (name: string) => `grpcclient "${name}" is closed (the app is shutting down)`,
  },
} satisfies ErrorCatalogue;

const make = errorFactory(grpcClientErrorCatalogue);

export const grpcClientErrors = {
  badTarget: (configPath: string, why: string) =>
    make('SVC_GRPCCLIENT_BAD_TARGET', [configPath, why]),
  notConnected: (configPath: string, target: string, state: string) =>
    make('SVC_GRPCCLIENT_NOT_CONNECTED', [configPath, target, state]),
  noRegistry: (configPath: string, name: string) =>
    make('SVC_GRPCCLIENT_NO_REGISTRY', [configPath, name]),
  closed: (name: string) => make('SVC_GRPCCLIENT_CLOSED', [name]),
};
