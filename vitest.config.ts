import os from 'node:os';
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

// The one vitest configuration of the workspace. Vitest looks for its config from the working
// directory upwards, so `vitest run` inside any project (what each project's `test` script and
// `nx affected:test` do) finds this file; test paths stay relative to the project.
export default defineConfig({
  // Workspace packages resolve to each other's TypeScript sources, not their dist/.
  resolve: { conditions: ['svcboot-source'] },
  ssr: { resolve: { conditions: ['svcboot-source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    maxWorkers: workers,
    // Tests start real servers and processes on 2 shared cores; a project needing more time
    // says so on its command line (tools/cli: --testTimeout).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
