// The zod functions svcboot's packages call, one by one: importing these names instead of zod's
// `z` namespace lets the bundle (tools/scripts/bundle-lib.mjs inlines zod into this package) leave
// out what is not called, every locale but English above all (zod registers English on the first
// schema it builds). zod's types all stay visible, so `z.ZodType`, `z.output<...>` and the like
// type as before; a value this list lacks is a compile error ("exported using 'export type'"):
// add it here.
export type * from 'zod';
export {
  array,
  boolean,
  enum,
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
