/**
 * `@svcboot/entry-core`: what an app imports. Booting and running an app, its entries and their
 * getters, the registries (entry kinds and middleware kinds), errors, records and loggers, the
 * configuration loader, and what an app's own middleware needs (the call, its context keys, a
 * rejection, a definition). What a library author needs beyond that is under two subpaths:
 * `@svcboot/entry-core/call` (the call layer: driver, chain, transports, built-in middleware,
 * status mapping, outbound calls) and `@svcboot/entry-core/toolkit` (for entry kinds: server
 * routes, connectors, schemas, reload, porting, error catalogues). At most 150 names here
 * (api/entry-core.api.md counts them).
 */
import { builtinPlugins } from './builtin/plugins.js';
import { registerEntryKind } from './registry.js';
import { entryGetter as getterOf } from './app.js';
import { configPlugin as configKind } from './builtin/config-entry.js';

for (const plugin of builtinPlugins) registerEntryKind(plugin);

/** The `config` entry named `name`: `configEntry(app, 'my-config').get('db.host')`. */
export const configEntry = getterOf(configKind);
export {
  boot,
  runApp,
  entryGetter,
  App,
  DEFAULT_SIGTERM_DRAIN_DELAY_MS,
  type BootOptions,
} from './app.js';
export {
  Phase,
  type Entry,
  type EntryContext,
  type EntryHealth,
  type DependencyDown,
  type EntryPlugin,
  type BaseEntryConfig,
  type LifecycleContext,
  type ConfigOf,
  type EntryOf,
} from './entry.js';
export {
  PluginRegistry,
  defaultRegistry,
  registerEntryKind,
  type AnyEntryPlugin,
} from './registry.js';
export { builtinPlugins } from './builtin/plugins.js';
export type { InboundCall } from './outbound/index.js';
export {
  ConfigError,
  BootstrapError,
  EntryLookupError,
  SvcError,
  errorTable,
  errorCodes,
  printableError,
  type ConfigIssue,
} from './errors.js';
export { entryBaseShape, observabilityShape } from './schema.js';
export {
  findInstalledKinds,
  findInstalledMiddlewares,
  type InstalledKind,
} from './config/installed-kinds.js';
export type { AppInfo, EnvInfo } from './info.js';
export { Event, type EventHandle } from './event/event.js';
export { EventFactory } from './event/event-factory.js';
export { EventLogger } from './event/event-logger.js';
export {
  makeScope,
  parseConsoleRecord,
  RECORD_KEYS,
  SEPARATOR,
  type EventEncoding,
  type EventScope,
} from './event/encode.js';
export type { Output } from './event/output.js';
export { createAppLogger, type LogLevel, type LogEncoding } from './logger.js';
export { LoggerEntry, type LoggerEntryConfig } from './builtin/logger-entry.js';
export { EventEntry, type EventEntryConfig } from './builtin/event-entry.js';
export { CertEntry, type CertBundle, type CertEntryConfig } from './builtin/cert-entry.js';
export {
  CallContext,
  type CallInfo,
  type CallHeaders,
  type CallMiddleware,
  type CallPrincipal,
  type AroundStep,
  PRINCIPAL,
} from './middleware/call.js';
export { createContextKey, type ContextKey } from './call/context-key.js';
export { csrfTokenOf, CSRF_TOKEN } from './middleware/csrf/context.js';
export { CallRejection, type RejectStatus, type RejectionSource } from './middleware/rejection.js';
export {
  defaultMiddlewareRegistry,
  middlewareDefinitions,
  registerMiddleware,
  registeredMiddlewares,
} from './middleware/definitions.js';
export { MiddlewareRegistry, withMiddlewareRegistry } from './middleware/registry.js';
export {
  MIDDLEWARE_PHASES,
  type MiddlewarePhase,
  type MiddlewarePlace,
  type MiddlewarePlacement,
} from './middleware/phase.js';
export {
  isIgnored,
  matchesCall,
  matchKey,
  type MiddlewareDefinition,
  type MiddlewareOptionsBase,
  type MiddlewareEntryInfo,
  type AnyMiddlewareDefinition,
} from './middleware/definition.js';
export {
  bootYamlJsonSchema,
  INTERPOLATION_PATTERN,
  type BootSchemaOptions,
  type JsonSchema,
} from './boot-schema.js';
export type { PortingMode } from './config/porting.js';
export { ConfigEntry, type ConfigEntryConfig } from './builtin/config-entry.js';
export {
  loadConfig,
  type LoadConfigInput,
  type LoadedConfig,
  type LoadedEntry,
  type AppSection,
  type ReloadSettings,
  type WorkersSetting,
} from './config/load.js';
export type { ReloadResult } from './reload/result.js';
export type { ReloadOutcome } from './reload/metrics.js';
