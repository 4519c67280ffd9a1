// The zod functions svcboot calls, named one by one (zod.ts makes them the `z` namespace) rather
// than zod's own `z`, so that the bundle leaves out what is not called, every locale but English
// above all (zod registers English on the first schema it builds). zod's types all stay visible
// (`z.ZodType`, `z.output<...>`); a value this list lacks is a compile error ("exported using
// 'export type'"): add it here.
export type * from 'zod';
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
  ZodError,
} from 'zod';
