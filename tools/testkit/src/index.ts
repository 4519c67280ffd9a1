export { waitFor } from './wait.js';
export { burnCpu } from './cpu.js';
export {
  freePort,
  isListening,
  isPortTaken,
  onFreePort,
  onFreePorts,
  PortTakenError,
} from './ports.js';
export {
  run,
  Child,
  plainEnv,
  SOURCE_NODE_ARGS,
  startOnFreePort,
  startOnFreePorts,
  type RunResult,
} from './process.js';
export {
  installPacked,
  installedFiles,
  installedPackages,
  PACK_TEST_TIMEOUT_MS,
  type InstalledPackage,
} from './pack.js';
export { RawHttpConnection, type RawResponse } from './raw-http.js';
export { getBytes, type BytesResponse } from './http-bytes.js';
export {
  HttpLoad,
  drainViolations,
  summarizeOutcomes,
  type HttpLoadOptions,
  type LoadOutcome,
} from './http-load.js';
export { consoleRecordTexts } from './records.js';
export { HeadlessChromium, chromiumBinary } from './chromium.js';
export { sigtermAndAskReadiness } from './drain.js';
export {
  sigtermUnderKeepAliveLoad,
  type KeepAliveOutcome,
  type SigtermLoadResult,
} from './sigterm-load.js';
// Backend harnesses: servers of their own on free ports, for tests that stop, restart or reconfigure them.
export { startPrivatePostgres, type PrivatePostgres } from './postgres.js';
export {
  PG_ADDR,
  adminQuery,
  uniqueDatabase,
  databaseExists,
  createDatabase,
  dropDatabase,
} from './postgres-admin.js';
export {
  redisCli,
  freeRedisPort,
  startRedis,
  startCluster,
  startSentinelGroup,
  type RedisProcess,
  type RedisClusterProcesses,
  type SentinelGroupProcesses,
} from './redis.js';
export { PrivateClickHouse } from './clickhouse.js';
export { RecordingPushgateway, type Received as PushReceived } from './pushgateway.js';
export { writeSelfSignedCert } from './tls.js';
export { bufBinary, BUF_VERSION } from './buf.js';
export { DnsServer } from './dns-server.js';
export {
  sigtermUnderSharedAgentLoad,
  type SharedAgentLoadResult,
} from './shared-agent-load.js';
export {
  driveBurst,
  driveOverload,
  quantile,
  type BurstCall,
  type BurstResult,
  type OverloadResult,
} from './overload-load.js';
