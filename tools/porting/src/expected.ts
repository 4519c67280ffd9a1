/**
 * The reasons each refused fixture is refused for (ids of docs/porting-from-rk-boot.md's
 * "Why a ported file can still be refused"), worked out from what each file asks of rk-boot:
 * a fixture not listed loads.
 */
export const REFUSED_IN_PORTING_MODE: Readonly<Record<string, readonly string[]>> = {
  'rk-boot--database-clickhouse': ['refused-clickhouse-native-port'],
  'rk-boot--middleware-jwt-gin': ['refused-jwt-key'],
  'rk-boot--web-gin-uncommented': [
    'refused-go-only',
    'refused-jwt-key',
    'refused-template-placeholder',
    'refused-unsupported',
  ],
  'rk-boot--web-grpc-uncommented': [
    'refused-go-only',
    'refused-jwt-key',
    'refused-template-placeholder',
    'refused-unsupported',
  ],
  'rk-db--clickhouse-example': ['refused-clickhouse-native-port', 'refused-go-only'],
  'rk-db--postgres-example': ['refused-go-only'],
  'rk-docs--getting-started-database-clickhouse-2': ['refused-clickhouse-native-port'],
  'rk-docs--user-guide-database-postgres-logging-2': ['refused-no-database'],
  'rk-docs--user-guide-database-postgres-plugin-prom-1': ['refused-go-only'],
  'rk-docs--user-guide-web-gin-logging-2': ['refused-go-only', 'refused-unsupported'],
  'rk-docs--user-guide-web-gin-logging-3': ['refused-unsupported'],
  'rk-docs--user-guide-web-gin-mid-jwt-1': ['refused-jwt-key'],
  'rk-docs--user-guide-web-gin-tls-1': ['refused-unsupported'],
  'rk-docs--user-guide-web-grpc-mid-jwt-1': ['refused-jwt-key'],
  'rk-grpc--proxy-proxy': ['refused-go-only'],
};

/** Without the porting mode, the same plus the keys rk-boot itself ignores. */
export const REFUSED_IN_STRICT_MODE: Readonly<Record<string, readonly string[]>> = {
  'rk-boot--database-clickhouse': ['refused-clickhouse-native-port'],
  'rk-boot--middleware-jwt-gin': ['refused-jwt-key'],
  'rk-boot--web-gin-uncommented': [
    'refused-go-only',
    'refused-jwt-key',
    'refused-rk-ignored',
    'refused-template-placeholder',
    'refused-unsupported',
  ],
  'rk-boot--web-grpc-uncommented': [
    'refused-go-only',
    'refused-jwt-key',
    'refused-rk-ignored',
    'refused-template-placeholder',
    'refused-unsupported',
  ],
  'rk-db--clickhouse-example': ['refused-clickhouse-native-port', 'refused-go-only'],
  'rk-db--postgres-example': ['refused-go-only'],
  'rk-demo--grpc-v2-distributed-log-grpc-serverA': ['refused-rk-ignored'],
  'rk-demo--grpc-v2-distributed-log-http-server': ['refused-rk-ignored'],
  'rk-docs--getting-started-database-clickhouse-2': ['refused-clickhouse-native-port'],
  'rk-docs--user-guide-database-postgres-logging-2': ['refused-no-database'],
  'rk-docs--user-guide-database-postgres-plugin-prom-1': ['refused-go-only'],
  'rk-docs--user-guide-web-gin-logging-2': ['refused-go-only', 'refused-unsupported'],
  'rk-docs--user-guide-web-gin-logging-3': ['refused-unsupported'],
  'rk-docs--user-guide-web-gin-mid-jwt-1': ['refused-jwt-key'],
  'rk-docs--user-guide-web-gin-mid-tracing-3': ['refused-rk-ignored'],
  'rk-docs--user-guide-web-gin-tls-1': ['refused-unsupported'],
  'rk-docs--user-guide-web-grpc-mid-jwt-1': ['refused-jwt-key'],
  'rk-docs--user-guide-web-grpc-mid-tracing-3': ['refused-rk-ignored'],
  'rk-docs--user-guide-web-grpc-trace-with-logs-2': ['refused-rk-ignored'],
  'rk-docs--user-guide-web-grpc-trace-with-logs-5': ['refused-rk-ignored'],
  'rk-grpc--proxy-proxy': ['refused-go-only'],
  'rk-grpc--simple': ['refused-one-port'],
};
