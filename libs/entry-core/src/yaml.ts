// yaml for svcboot's other packages (as `@svcboot/entry-core/internal/yaml`): the copy this
// package's bundle inlines (tools/scripts/bundle-lib.mjs --inline), so a start that reads
// boot.yaml and an OpenAPI mapping file loads one yaml, in one file, instead of its 72 modules
// again (BENCHMARKS.md, "Start: zod and yaml inlined").
export { parse } from 'yaml';
