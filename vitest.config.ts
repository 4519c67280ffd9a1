import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Test files run at once per project. Vitest's default is one less than the cores, so one on this
 * project's 2-core machine: every file then waits for the one before, though most of a file's time
 * is spent waiting on servers, child processes and sockets, not on a core. One per core, at least
 * 2, keeps the cores busy; with nx running two projects at once (nx.json `parallel`), at most four
 * files run together on 2 cores. SVC_TEST_WORKERS overrides it (1 runs each project's files one by
 * one, e.g. to tell a slow file from a crowded machine).
 */
const workers = Number(process.env['SVC_TEST_WORKERS']) || Math.max(2, os.availableParallelism());

/**
 * Test files share their worker's module graph (vitest's `isolate: false`): each worker process
 * loads grpc-js, zod, protobuf-es, the libs' sources and the rest once and then runs file after
 * file, where an isolated run starts a fresh process per file and loads it all again. In
 * entry-grpc's 55 files that loading was 207 s of the 312 s run (vitest's "import" time, load
 * 15-23), 22 s of 174 s without isolation. Each file still starts its own servers, apps and
 * registries; the whole suite passes this way, and spies are restored after each test
 * (`restoreMocks`) so none outlives its file. SVC_TEST_ISOLATE=1 gives each file a fresh process
 * again, e.g. to tell a leak between files from a fault of the file itself.
 */
const isolate = process.env['SVC_TEST_ISOLATE'] === '1';

// The one vitest configuration of the workspace. Vitest looks for its config from the working
// directory upwards, so `vitest run` inside any project (what each project's `test` script and
// `nx affected:test` do) finds this file; test paths stay relative to the project.
export default defineConfig({
  // Workspace packages resolve to each other's TypeScript sources, not their dist/.
  resolve: { conditions: ['svcboot-source'] },
  ssr: { resolve: { conditions: ['svcboot-source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    // *.rehearsal.test.ts run in the release rehearsal alone (tools/scripts/release-rehearsal.sh
    // sets SVC_REHEARSAL_REGISTRY): they install from the registry it publishes to.
    exclude: [
      '**/node_modules/**',
      '**/.git/**',
      ...(process.env['SVC_REHEARSAL_REGISTRY'] ? [] : ['**/*.rehearsal.test.ts']),
      // *.e2e.test.ts (a system of processes behind HAProxy, a browser driving a page, a burst)
      // run once per CI in their own step (`npm run test:e2e`, tools/scripts/test-e2e.sh sets
      // SVC_E2E=1), not on every Node version's `npm test`.
      ...(process.env['SVC_E2E'] === '1' ? [] : ['**/*.e2e.test.ts']),
    ],
    maxWorkers: workers,
    // Transformed modules persist on disk (node_modules/.experimental-vitest-cache), keyed by
    // content: the 24 projects' vitest processes import the same libs' sources (entry-core's in
    // every one), and each transformed them again; now the first does it for the others, and the
    // next Node version's run reuses them all. `vitest --clearCache` empties it.
    experimental: { fsModuleCache: true },
    isolate,
    restoreMocks: true,
    // The tests' fetch lets go of idle keep-alive connections (see the file): an app's graceful
    // shutdown no longer waits on a connection the test is done with.
    setupFiles: [fileURLToPath(new URL('tools/testkit/src/fetch-keep-alive.ts', import.meta.url))],
    // Tests start real servers and processes on 2 shared cores; a project needing more time
    // says so on its command line (tools/cli: --testTimeout).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
