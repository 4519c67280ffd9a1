// The workspace's one zod instance: every svcboot package builds its schemas with this `z` (as
// `@svcboot/entry-core/internal/zod`), so a schema one package builds nests in another's and one
// locale setting holds for all. In the published package it is zod inlined into dist/package.js,
// only the functions zod-api.ts names (BENCHMARKS.md, "Start: zod and yaml inlined"): one file
// instead of zod's 95 modules at start. Type-only imports may stay on 'zod'.
export * as z from './zod-api.js';
