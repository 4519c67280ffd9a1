import { defineConfig, mergeConfig } from 'vitest/config';
import workspace from '../vitest.config.js';

// The workspace's configuration, with the bench's own tests (lib/*.test.ts: the BENCHMARKS.md
// writer's): `cd bench && npx vitest run lib/benchmarks-md.test.ts`. bench/ is not a workspace
// project, so `npm test` does not run them.
export default mergeConfig(workspace, defineConfig({ test: { include: ['lib/**/*.test.ts'] } }));
