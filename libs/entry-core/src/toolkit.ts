/**
 * `@svcboot/entry-core/toolkit`: what an entry kind's author needs besides the entry model of
 * `@svcboot/entry-core`. Server routes (health, metrics, pprof, static files, UIs), HTTP helpers
 * (compression, idle connections, quiet listeners), the connector toolkit, option schemas, error
 * catalogues, reload, porting rules, workers, load shedding and record encoders.
 */
export {
  assertOnePackageCopy,
  duplicatePackageCopies,
  recordPackageCopy,
  type PackageCopy,
} from './package-copies.js';
export { DEPENDENCIES_DOWN_PAIR } from './dependencies.js';
export { HealthProbe, type HealthProbeOptions } from './connector/health-probe.js';
export {
  coreErrors,
  entryLookupError,
  errorFactory,
  errorMessage,
  formatIssue,
  type ErrorArgs,
  type ErrorCatalogue,
  type ErrorEntry,
} from './errors.js';
export {
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
export { isoWithOffset, timezoneName } from './time.js';
export { encodeConsole, encodeJson } from './event/encode.js';
export { setLogCorrelation, type LogCorrelation } from './logger.js';
export { withTimeout } from './lifecycle.js';
export { workersRegistry, aggregateWorkerMetrics } from './cluster/metrics.js';
export { allWorkersReady } from './cluster/readiness.js';
export { WORKER_ENV } from './cluster/protocol.js';
export { IdleConnections, DRAIN_IDLE_CLOSE_MS } from './http/idle-connections.js';
export { ListenerQuiet, LISTENER_QUIET_MS, LISTENER_QUIET_MAX_MS } from './http/quiet-listener.js';
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
export { LOGGER_ENTRY_TYPE, loggerPlugin } from './builtin/logger-entry.js';
export { EVENT_ENTRY_TYPE, eventPlugin } from './builtin/event-entry.js';
export { CERT_ENTRY_TYPE, certPlugin } from './builtin/cert-entry.js';
export {
  registerTracedClient,
  onTracedClient,
  type TracedClient,
  type TracedClientListener,
} from './tracing/traced-clients.js';
export { quote as jsonString } from './event/json.js';
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
  applyPortingRules,
  leadingSlash,
  needsLeadingSlash,
  PORTING_MODES,
  type PortingAction,
  type PortingCode,
  type PortingRule,
} from './config/porting.js';
export {
  appPortingRules,
  eventPortingRules,
  gzipPortingRules,
  loggerPortingRules,
  serverPortingRules,
} from './config/porting-rules.js';
export { CONFIG_ENTRY_TYPE, configEntrySchema, configPlugin } from './builtin/config-entry.js';
export { gormPluginsRule, gormPluginsOffRule } from './connector/porting.js';
export {
  UiMount,
  rapiDocMount,
  swaggerUiMount,
  type RapiDocOptions,
  type SwaggerUiOptions,
  type UiDocument,
} from './http/api-ui.js';
export { ReloadMetric, RELOADS_METRIC } from './reload/metrics.js';
export { refusedReload, type ConfigChange, type EntryReload } from './reload/entry-reload.js';
export { reloadServerEntry } from './reload/server-reload.js';
export { changedPaths } from './reload/diff.js';
export { loadSheddingSchema, type LoadSheddingOptions } from './overload/schema.js';
export {
  type DeadlineSource,
  LoadShedding,
  loadSheddingOf,
  SHED_AT_DOOR,
  SHED_HTTP_STATUS,
  type ShedReason,
} from './overload/load-shedding.js';
export { LOAD_SAMPLE_INTERVAL_MS } from './overload/event-loop-load.js';
export type { OverloadClock } from './overload/clock.js';
