/**
 * Every benchmark `npm run bench` knows, in the order it runs them, with the settings the whole
 * run uses: chosen so that all of them finish unattended in about 12 minutes on a 2-core machine
 * (bench/README.md lists them; run.ts caps the whole run at 1,500 s). `--quick` swaps in each one's
 * `quickEnv` (about 6 minutes). Running one script by hand without these variables uses its own
 * defaults.
 */
import { nodeTsx as tsx } from './lib/built.js';

export interface Benchmark {
  name: string;
  description: string;
  /** Run from bench/. */
  command: readonly string[];
  /** Added to the environment (BENCH_* settings). */
  env?: Record<string, string>;
  /** With `npm run bench -- --quick`: replaces those of `env` it names (fewer calls, shorter rounds). */
  quickEnv?: Record<string, string>;
  /** Killed (SIGKILL) after this long; its section then says so. */
  timeoutMs: number;
}

/** The HTTP comparisons (lib/http-compare.ts): 4 rounds of 3 s after a 1 s warm-up per server and route. */
const HTTP_ROUNDS = { BENCH_SECONDS: '3', BENCH_ROUNDS: '4', BENCH_WARMUP_SECONDS: '1' };

export const BENCHMARKS: Benchmark[] = [
  {
    name: 'events',
    description:
      'The cost of one event record written to a file, console and json encodings, against pino.',
    command: tsx('events/run.ts'),
    env: { BENCH_RECORDS: '200000' },
    timeoutMs: 60_000,
  },
  {
    name: 'chain',
    description:
      "entry-core's middleware chain (meta, prom, logging) per call without a transport, against an empty chain.",
    command: tsx('chain/run.ts'),
    env: { BENCH_CALLS: '100000' },
    timeoutMs: 90_000,
  },
  {
    name: 'cache',
    description:
      'entry-cache local-tier hit, remote-tier hit and getOrLoad miss against lru-cache and ioredis used directly.',
    command: tsx('cache/run.ts'),
    env: { BENCH_ITERATIONS: '50000' },
    timeoutMs: 60_000,
  },
  {
    name: 'grpc',
    description:
      'gRPC unary Greeter.Hello and gateway GET /v1/hello: svcboot (no middleware; logging + prom + meta) against the floors (node:http2, node:http), the bare libraries (grpc-js, Koa), the hand-wired same-work peers (pino + prom-client) and NestJS, in one pinned, rotated run; then app.workers 1 against 2, and where the time goes.',
    // Every server up at once; 7 rounds of 2 s per server and path after a 2 s warm-up. ~7 min
    // to the profiles on a quiet machine (2026-11-29), then ~1 min for app.workers: 420 s cut
    // every run before the workers table and the closing lines.
    command: tsx('grpc/run.ts'),
    env: { BENCH_SECONDS: '2', BENCH_ROUNDS: '7' },
    quickEnv: { BENCH_SECONDS: '1', BENCH_ROUNDS: '3', BENCH_QUICK: '1' },
    timeoutMs: 600_000,
  },
  {
    name: 'typed',
    description:
      'Typed contracts (issue 27): Greeter as a typed service (protoc-gen-es code, @bufbuild/protobuf codec) against the proto-loader path on gRPC unary and the gateway, server CPU per request; what middleware.validate (protovalidate) costs per call on a request with ten constrained fields; the @bufbuild/protobuf binary codec against protobufjs in process.',
    command: tsx('grpc/typed-contracts.ts'),
    env: { BENCH_SECONDS: '2', BENCH_ROUNDS: '5' },
    quickEnv: { BENCH_SECONDS: '1', BENCH_ROUNDS: '3', BENCH_CODEC_CALLS: '20000' },
    // ~5 minutes at load average 20-25.
    timeoutMs: 480_000,
  },
  {
    name: 'memory',
    description:
      "demo-grpc's start-up to its first answered call, and its resident memory idle, after BENCH_CALLS gRPC calls and after BENCH_CALLS gateway calls (1,000,000 each in the full run).",
    command: tsx('memory/run.ts'),
    env: { BENCH_CALLS: '1000000', BENCH_STARTS: '5' },
    quickEnv: { BENCH_CALLS: '100000', BENCH_STARTS: '3', BENCH_QUICK: '1' },
    // 2,000,000 calls: ~3 minutes at 10-25k req/s, twice that when the machine is busy.
    timeoutMs: 600_000,
  },
  {
    name: 'start',
    description:
      'Cold start (spawn to the port accepting, median of 5) and idle RSS of a compiled one-entry grpc app (logging + prom + meta) against the hand-wired grpc-js peer, in one run (issue #41).',
    command: tsx('grpc/start.ts'),
    env: { BENCH_STARTS: '5' },
    quickEnv: { BENCH_STARTS: '3' },
    // 10 starts, each idle for 1 s: ~30 s, a minute when the machine is busy.
    timeoutMs: 180_000,
  },
  {
    name: 'limits',
    description:
      'The cost of auth (API key) + rateLimit (in process) + timeout per call, and of the Redis-shared rate limit, on gRPC unary and gateway GET (issue #19): server CPU per request, in A B C C B A order.',
    command: tsx('limits/run.ts', '3', '8', '2'),
    timeoutMs: 300_000,
  },
  {
    name: 'overload',
    description:
      "What a shed call costs the server against the node:http floor (HTTP) and the node:http2 floor (gRPC), then the goodput curve (issue #42): an httpserver entry's CPU-bound route offered 0.5×-4× its measured capacity open-loop, every call with a 1 s deadline, with load shedding (the defaults) and without: goodput, shed rate, admitted p50/p99 and /livez p99 per step, and the picture (gnuplot, Debian gnuplot-nox) in bench/overload/goodput.png.",
    command: tsx('overload/run.ts'),
    env: { STEP_SECONDS: '4' },
    quickEnv: { STEP_SECONDS: '2' },
    // The cost table's gRPC rows add about 35 s to a run of ~210 s.
    timeoutMs: 360_000,
  },
  {
    name: 'trace',
    description:
      'The cost of OpenTelemetry tracing per gateway call, off, sampled 100 % and 1 % (spans exported over OTLP to a local sink).',
    command: tsx('trace/run.ts'),
    env: { BENCH_SECONDS: '3', BENCH_ROUNDS: '3' },
    timeoutMs: 300_000,
  },
  {
    name: 'grpcclient',
    description:
      "The client side's CPU per outbound unary call: a grpcclient entry's client (no inbound call; with one, the breaker, round_robin and a retry policy; with the logging and prom middlewares too; a new client per call) against a bare grpc-js client, with and without the same service config.",
    command: tsx('grpcclient/run.ts'),
    env: { BENCH_CALLS: '20000' },
    quickEnv: { BENCH_CALLS: '5000' },
    // ~30 s on an idle 2-core machine; 123 s at load average 11-14.
    timeoutMs: 300_000,
  },
  {
    name: 'httpclient',
    description:
      "The client side's CPU per outbound HTTP GET: an httpclient entry's fetch (no inbound call; with one, the breaker and a retry policy; with the logging and prom middlewares too) against Node's bare fetch.",
    command: tsx('httpclient/run.ts'),
    env: { BENCH_CALLS: '20000' },
    quickEnv: { BENCH_CALLS: '5000' },
    timeoutMs: 300_000,
  },
  {
    name: 'kv',
    description:
      'demo-kv (httpserver + kvstore) against bare Koa + ioredis: GET /v1/get and POST /v1/set.',
    command: tsx('kv/run.ts'),
    env: { ...HTTP_ROUNDS, BENCH_CONNECTIONS: '10' },
    timeoutMs: 120_000,
  },
  {
    name: 'sql',
    description:
      'demo-sql (httpserver + relationaldb) as shipped and with its middleware off against bare Koa + pg, and the query layer alone (Kysely against pool.query).',
    command: tsx('sql/run.ts'),
    env: { ...HTTP_ROUNDS, BENCH_CONNECTIONS: '32', BENCH_ITERATIONS: '10000' },
    timeoutMs: 180_000,
  },
  {
    name: 'columnar',
    description:
      'demo-columnar (httpserver + columnardb) against bare Koa + @clickhouse/client: GET /v1/user and PUT /v1/user.',
    command: tsx('columnar/run.ts'),
    env: { ...HTTP_ROUNDS, BENCH_CONNECTIONS: '10' },
    timeoutMs: 120_000,
  },
  {
    name: 'demos',
    description:
      'Start-up time of each demo to its first successful request (median of 10), and resident memory idle and under load.',
    command: tsx('demos/run.ts'),
    env: { BENCH_STARTS: '10', BENCH_LOAD_SECONDS: '3' },
    // 5 demos × 11 starts: ~1 min on a quiet machine, over 5 min at load average 10.
    timeoutMs: 480_000,
  },
];
