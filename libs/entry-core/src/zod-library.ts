// The zod values svcboot calls, bundled (tools/scripts/bundle-lib.mjs --side zod=zod-library.cjs@
// src/zod-library.ts) into dist/zod-library.cjs, one CommonJS file holding only these of zod, which
// zod-recipe.ts loads when a schema is first built. No module imports this one: run from the
// sources, zod-recipe.ts loads zod itself from node_modules.
export {
  array,
  boolean,
  enum,
  globalRegistry,
  instanceof,
  lazy,
  literal,
  number,
  object,
  record,
  strictObject,
  string,
  toJSONSchema,
  union,
  unknown,
} from 'zod';
