import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['svcboot-source'] },
  ssr: { resolve: { conditions: ['svcboot-source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
