import { builtinPlugins } from './builtin/plugins.js';
import { registerEntryKind } from './registry.js';
import { entryGetter as getterOf } from './app.js';
import { configPlugin as configKind } from './builtin/config-entry.js';

for (const plugin of builtinPlugins) registerEntryKind(plugin);

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
export {
  assertOnePackageCopy,
  duplicatePackageCopies,
  recordPackageCopy,
  type PackageCopy,
} from './package-copies.js';
export { builtinPlugins } from './builtin/plugins.js';
export { DEPENDENCIES_DOWN_PAIR } from './dependencies.js';
export { HealthProbe, type HealthProbeOptions } from './connector/health-probe.js';
export {
  AdaptiveBreaker,
  addBreakerMetricsTo,
  breakerMetrics,
  breakerStep,
  BreakerMiddleware,
  breakerSchema,
  clientAuthSchema,
  clientCredentials,
  clientErrorsSchema,
  inboundDeadline,
  inboundHeader,
  isBackendFailure,
  outboundDeadline,
  propagateHeaders,
  propagateSchema,
  baggageHeader,
  writeTraceHeaders,
  type BaggageMember,
  type OutboundTrace,
  type BreakerClientKind,
  type BreakerMetrics,
  type BreakerMiddlewareOptions,
  type BreakerOptions,
  type BreakerState,
  type InboundCall,
  type OutboundHeaders,
  type PropagationOptions,
} from './outbound/index.js';
export {
  ConfigError,
  BootstrapError,
  EntryLookupError,
  SvcError,
  coreErrors,
  entryLookupError,
  errorFactory,
  errorTable,
  errorMessage,
  errorCodes,
  printableError,
  formatIssue,
  type ConfigIssue,
  type ErrorArgs,
  type ErrorCatalogue,
  type ErrorEntry,
} from './errors.js';
export {
  entryBaseShape,
  observabilityShape,
  logLevelSchema,
  encodingSchema,
  outputPathsSchema,
  msSchema,
  portSchema,
  statementLoggerSchema,
  type StatementLoggerOptions,
} from './schema.js';
export {
  parseHostPort,
  hostPortSchema,
  parseParams,
  databaseItemSchema,
  databaseListSchema,
  StatementLogger,
  type HostPort,
  type HostPortOptions,
  type ConnectorParam,
  type DatabaseSchemaOptions,
  type Statement,
} from './connector/index.js';
export { redactConfig, redactUrlCredentials, isSecretKey, REDACTED } from './config/secrets.js';
export { closest, didYouMean } from './config/suggest.js';
export {
  findInstalledKinds,
  findInstalledMiddlewares,
  type InstalledKind,
} from './config/installed-kinds.js';
export { SVCBOOT_MIDDLEWARE_PACKAGES } from './middleware/middleware-packages.js';
export type { AppInfo, EnvInfo } from './info.js';
export { isoWithOffset, timezoneName } from './time.js';
export { Event, type EventHandle } from './event/event.js';
export { EventFactory } from './event/event-factory.js';
export { EventLogger } from './event/event-logger.js';
export {
  encodeConsole,
  encodeJson,
  makeScope,
  parseConsoleRecord,
  RECORD_KEYS,
  SEPARATOR,
  type EventEncoding,
  type EventScope,
} from './event/encode.js';
export type { Output } from './event/output.js';
export {
  createAppLogger,
  setLogCorrelation,
  type LogLevel,
  type LogEncoding,
  type LogCorrelation,
} from './logger.js';
export { withTimeout } from './lifecycle.js';
export { workersRegistry, aggregateWorkerMetrics } from './cluster/metrics.js';
export { allWorkersReady } from './cluster/readiness.js';
export { WORKER_ENV } from './cluster/protocol.js';
export { IdleConnections, DRAIN_IDLE_CLOSE_MS } from './http/idle-connections.js';
export {
  ListenerQuiet,
  LISTENER_QUIET_MS,
  LISTENER_QUIET_MAX_MS,
} from './http/quiet-listener.js';
export {
  compressionSchema,
  compressBody,
  isCompressible,
  negotiateEncoding,
  varyAcceptEncoding,
  type CompressionConfig,
  type ContentEncoding,
} from './http/compression.js';
export {
  HealthRoutes,
  collectProcessMetrics,
  type RouteAnswer,
  type HealthRoutesOptions,
} from './health-routes.js';
export {
  LoggerEntry,
  LOGGER_ENTRY_TYPE,
  loggerPlugin,
  type LoggerEntryConfig,
} from './builtin/logger-entry.js';
export {
  EventEntry,
  EVENT_ENTRY_TYPE,
  eventPlugin,
  type EventEntryConfig,
} from './builtin/event-entry.js';
export {
  CertEntry,
  CERT_ENTRY_TYPE,
  certPlugin,
  type CertBundle,
  type CertEntryConfig,
} from './builtin/cert-entry.js';
export {
  CallContext,
  CallChain,
  ChainStage,
  acceptableRequestId,
  type CallInfo,
  type CallHeaders,
  type CallMiddleware,
  type CallPrincipal,
  type AroundStep,
  type CallBodySource,
  PRINCIPAL,
  setHttpHeader,
} from './middleware/call.js';
export { createContextKey, type ContextKey } from './call/context-key.js';
export { startCall, endCall } from './call/driver.js';
export type { CallAdapter } from './call/adapter.js';
export {
  hiddenUpstreamFailure,
  markUpstreamFailure,
  upstreamFailureOf,
  type UpstreamFailure,
} from './call/upstream-failure.js';
export { CallAnswer } from './middleware/answer.js';
export { CorsMiddleware, corsDefinition } from './middleware/cors/index.js';
export {
  CsrfMiddleware,
  csrfDefinition,
  csrfTokenOf,
  CSRF_TOKEN,
} from './middleware/csrf/index.js';
export { SecureMiddleware, secureDefinition } from './middleware/secure/index.js';
export { LoggingMiddleware } from './middleware/logging.js';
export { MetaMiddleware, META_HEADERS } from './middleware/meta.js';
export { PromMiddleware, type PromMiddlewareOptions } from './middleware/prom.js';
export {
  basicCallPayloads,
  basicTransport,
  type CallPayloads,
  type CallTransport,
  type TransportMetrics,
} from './middleware/transport.js';
export {
  CallRejection,
  httpStatusOf,
  httpStatusOfRejection,
  type RejectStatus,
  type RejectionSource,
} from './middleware/rejection.js';
export { GRPC_CODE_NAMES, grpcCodeOfName, httpStatusOfGrpcCode } from './middleware/grpc-codes.js';
export {
  defaultMiddlewareRegistry,
  middlewareDefinitions,
  registerMiddleware,
  registeredMiddlewares,
} from './middleware/definitions.js';
export { MiddlewareRegistry, withMiddlewareRegistry } from './middleware/registry.js';
export {
  errorModelSchema,
  errorBody,
  googleStatusName,
  grpcStatusOfHttp,
  type ErrorModel,
  type HttpErrorInfo,
} from './middleware/error-model.js';
export {
  authDefinition,
  authSchema,
  AuthMiddleware,
  GuardSkip,
  type AuthOptions,
} from './middleware/auth/index.js';
export {
  registerTracedClient,
  onTracedClient,
  type TracedClient,
  type TracedClientListener,
} from './tracing/traced-clients.js';
export { armDeadline, DEADLINE_MESSAGE } from './middleware/deadline.js';
export {
  rateLimitDefinition,
  RateLimitMiddleware,
  rateLimitSchema,
  type RateLimitConfig,
  type ScriptClient,
} from './middleware/rateLimit/index.js';
export {
  timeoutDefinition,
  TimeoutMiddleware,
  timeoutSchema,
  type TimeoutConfig,
} from './middleware/timeout/index.js';
export {
  MiddlewareOrder,
  isIgnored,
  matchesCall,
  matchKey,
  type MiddlewareDefinition,
  type MiddlewareOptionsBase,
  type MiddlewareEntryInfo,
  type AnyMiddlewareDefinition,
} from './middleware/definition.js';
export { quote as jsonString } from './event/json.js';
export {
  CallCounter,
  CallHistogram,
  RecentSummary,
  sharedFamily,
  type CounterChild,
  type ObserverChild,
} from './middleware/call-metrics.js';
export {
  CallFamilies,
  CALL_LATENCY_BUCKETS,
  type CallFamiliesOptions,
  type FamilyText,
} from './middleware/call-families.js';
export {
  middlewareSchema,
  promEndpointSchema,
  buildCallChain,
  planChainReload,
  type CallChainOptions,
  type OrderedMiddleware,
  type MiddlewareConfig,
  type PromEndpointConfig,
} from './middleware/options.js';
export {
  ServerRoutes,
  sendJson,
  sendError,
  methodNotAllowed,
  plainErrorBody,
  PLAIN_ERRORS,
  type RouteErrors,
  type ErrorBodyOf,
  type RouteError,
  type HttpRoute,
  type MatchedRoute,
} from './http/route.js';
export { serveThroughChain } from './http/chain-route.js';
export { plainPeer, socketPeer } from './http/peer.js';
export {
  CommonService,
  type CommonServiceOptions,
  type HealthAnswers,
} from './common-service/common-service.js';
export { commonServiceSchema, type CommonServiceConfig } from './common-service/schema.js';
export { Pprof, type PprofOptions } from './pprof/pprof.js';
export { pprofSchema, type PprofConfig } from './pprof/schema.js';
export { StaticFiles, type StaticFilesOptions } from './static/static-files.js';
export { staticSchema, type StaticConfig } from './static/schema.js';
export { PromPusher, type PromPusherOptions } from './prom-pusher/prom-pusher.js';
export {
  promPusherSchema,
  promSchema,
  type PromPusherConfig,
  type PromConfig,
} from './prom-pusher/schema.js';
export {
  serverRoutesShape,
  buildServerRoutes,
  serverRouteAddresses,
  startPromPusher,
  type ServerRoutesConfig,
} from './server-routes.js';
export {
  bootYamlJsonSchema,
  INTERPOLATION_PATTERN,
  type BootSchemaOptions,
  type JsonSchema,
} from './boot-schema.js';
export {
  applyPortingRules,
  leadingSlash,
  needsLeadingSlash,
  PORTING_MODES,
  type PortingAction,
  type PortingCode,
  type PortingMode,
  type PortingRule,
} from './config/porting.js';
export {
  appPortingRules,
  eventPortingRules,
  gzipPortingRules,
  loggerPortingRules,
  serverPortingRules,
} from './config/porting-rules.js';
export {
  ConfigEntry,
  CONFIG_ENTRY_TYPE,
  configEntrySchema,
  configPlugin,
  type ConfigEntryConfig,
} from './builtin/config-entry.js';
export { metaHeaders } from './middleware/meta.js';
/** The `config` entry named `name`: `configEntry(app, 'my-config').get('db.host')`. */
export const configEntry = getterOf(configKind);
export { gormPluginsRule, gormPluginsOffRule } from './connector/porting.js';
export {
  loadConfig,
  type LoadConfigInput,
  type LoadedConfig,
  type LoadedEntry,
  type AppSection,
  type ReloadSettings,
  type WorkersSetting,
} from './config/load.js';
export {
  UiMount,
  rapiDocMount,
  swaggerUiMount,
  type RapiDocOptions,
  type SwaggerUiOptions,
  type UiDocument,
} from './http/api-ui.js';
export type { ReloadResult } from './reload/result.js';
export { ReloadMetric, RELOADS_METRIC, type ReloadOutcome } from './reload/metrics.js';
export { refusedReload, type ConfigChange, type EntryReload } from './reload/entry-reload.js';
export { reloadServerEntry } from './reload/server-reload.js';
export { changedPaths } from './reload/diff.js';
export { loadSheddingSchema, type LoadSheddingOptions } from './overload/schema.js';
export {
  LoadShedding,
  SHED_HTTP_STATUS,
  type DeadlineSource,
  type ShedReason,
} from './overload/load-shedding.js';
export { LOAD_SAMPLE_INTERVAL_MS } from './overload/event-loop-load.js';
