import { defineConfig } from 'vitest/config';

// The one vitest configuration of the workspace. Vitest looks for its config from the working
// directory upwards, so `vitest run` inside any project (what each project's `test` script and
// `nx affected:test` do) finds this file; test paths stay relative to the project.
export default defineConfig({
  // Workspace packages resolve to each other's TypeScript sources, not their dist/.
  resolve: { conditions: ['svcboot-source'] },
  ssr: { resolve: { conditions: ['svcboot-source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    // Tests start real servers and processes on 2 shared cores; a project needing more time
    // says so on its command line (tools/cli: --testTimeout).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
