/** How each demo is started on a given port, what proves it is up, and what to load it with. */
import pg from 'pg';

export interface DemoSpec {
  name: string;
  /** Arguments that move its server to `port` (each demo's boot.yaml/README names the entry). */
  portArgs(port: number): string[];
  env?: Record<string, string>;
  /** The first successful request. */
  probe: { method?: 'GET' | 'POST' | 'PUT'; path: string; body?: string };
  load: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; body?: string };
  /** Removes what the demo left behind (its database), once it has stopped for good. */
  cleanup?(): Promise<void>;
}

const REDIS_ADDR = process.env['REDIS_ADDR'] ?? '127.0.0.1:6379';
const PG_ADDR = process.env['PG_ADDR'] ?? '127.0.0.1:5432';
const CLICKHOUSE_ADDR = process.env['CLICKHOUSE_ADDR'] ?? '127.0.0.1:8123';
/** The databases demo-sql and demo-columnar create for this benchmark (dropped by cleanup). */
const BENCH_DB = 'svcboot_bench_demos';
const KV_KEY = 'svcboot-bench-demos';

export const DEMOS: DemoSpec[] = [
  {
    name: 'demo-cache',
    portArgs: (p) => ['--set', `httpserver.api.port=${p}`],
    env: { REDIS_ADDR },
    probe: { path: '/v1/set?value=warm' },
    load: { path: '/v1/get' },
  },
  {
    name: 'demo-kv',
    portArgs: (p) => ['--set', `httpserver.kv-api.port=${p}`],
    env: { REDIS_ADDR },
    // Stores the key the load reads (it expires after the demo's one minute).
    probe: {
      method: 'POST',
      path: '/v1/set',
      body: JSON.stringify({ key: KV_KEY, value: 'bench-value' }),
    },
    load: { path: `/v1/get?key=${KV_KEY}` },
  },
  {
    name: 'demo-sql',
    portArgs: (p) => ['--set', `httpserver.api.port=${p}`],
    // The first start creates and migrates the database; the others find it.
    env: { PG_ADDR, PG_DATABASE: BENCH_DB },
    probe: { path: '/v1/user/1' },
    load: { path: '/v1/user/1' },
    async cleanup() {
      const [host, port] = PG_ADDR.split(':');
      const client = new pg.Client({
        host,
        port: Number(port),
        user: 'postgres',
        database: 'postgres',
      });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(BENCH_DB)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  },
  {
    name: 'demo-columnar',
    portArgs: (p) => ['--set', `httpserver.user-api.port=${p}`],
    env: { CLICKHOUSE_ADDR, CLICKHOUSE_DB: BENCH_DB },
    probe: { path: '/v1/user' },
    load: { path: '/v1/user' },
    async cleanup() {
      const res = await fetch(`http://${CLICKHOUSE_ADDR}/`, {
        method: 'POST',
        body: `DROP DATABASE IF EXISTS ${BENCH_DB}`,
      });
      if (!res.ok) throw new Error(`DROP DATABASE ${BENCH_DB}: ${await res.text()}`);
    },
  },
  {
    name: 'demo-grpc',
    portArgs: (p) => ['--set', `grpc.greeter.port=${p}`],
    probe: { path: '/v1/hello' },
    load: { path: '/v1/hello' },
  },
];
