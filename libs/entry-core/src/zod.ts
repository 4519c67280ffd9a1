// The workspace's one zod instance: svcboot's other packages build their schemas with this `z`
// (`@svcboot/entry-core/internal/zod`), and this package's own `import { z } from 'zod'` resolves
// to this module when bundled (tools/scripts/bundle-lib.mjs --shim zod=src/zod.ts), so one zod
// serves them all: a schema one package builds nests in another's, and one locale setting holds
// for all. Type-only imports stay on 'zod'. Its schema builders record recipes (zod-recipe.ts),
// which zod builds only when asked; zod itself (dist/zod-library.cjs, only the functions
// zod-library.ts names, one file instead of zod's 95 modules) is loaded then, not at start. This
// package's modules import `z` from here in the sources too, so that tests run what ships.
export * as z from './zod-api.js';
export { described } from './described.js';
