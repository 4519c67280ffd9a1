import { z } from 'zod';

/**
 * protoc-gen-openapiv2's flags for the generated documents, with its defaults: the `sw` section of
 * a grpc entry (entry-grpc's schema spreads this shape) and what `buildOpenApiDocuments` reads.
 */
export const openApiOptionsShape = {
  jsonNamesForFields: z.boolean().default(true),
  disableDefaultErrors: z.boolean().default(false),
  disableDefaultResponses: z.boolean().default(false),
  disableServiceTags: z.boolean().default(false),
  includePackageInTags: z.boolean().default(false),
  openapiNamingStrategy: z.enum(['legacy', 'simple', 'fqn', 'package']).default('legacy'),
  visibilityRestrictionSelectors: z.array(z.string().min(1)).default([]),
  enumsAsInts: z.boolean().default(false),
  omitEnumDefaultValue: z.boolean().default(false),
  simpleOperationIds: z.boolean().default(false),
  enableRpcDeprecation: z.boolean().default(false),
  ignoreComments: z.boolean().default(false),
  removeInternalComments: z.boolean().default(false),
  allowPatchFeature: z.boolean().default(true),
  repeatedPathParamSeparator: z.enum(['csv', 'pipes', 'ssv', 'tsv']).default('csv'),
  preserveRpcOrder: z.boolean().default(false),
  recursiveDepth: z.number().int().positive().default(1000),
};

/** `protos:` of a grpc entry: the .proto files, their import roots, and binary descriptor sets. */
export const protosSchema = z
  .strictObject({
    files: z.array(z.string().min(1)).default([]),
    includeDirs: z.array(z.string().min(1)).default([]),
    /** Binary FileDescriptorSets (`buf build -o api.binpb`, `protoc --include_imports --descriptor_set_out`). */
    descriptorSets: z.array(z.string().min(1)).default([]),
  })
  .prefault({});

/**
 * The settings of a grpc entry the documents depend on, as boot.yaml writes them: unknown keys of
 * `sw` (its `enabled`, `path`) and of `gwOption` (the gateway's other options) are ignored.
 */
export const documentSettingsSchema = z.object({
  protos: protosSchema,
  gwMappingFiles: z.array(z.string().min(1)).default([]),
  generateUnboundMethods: z.boolean().default(false),
  gwOption: z.object({ allowPatchFeature: z.boolean().default(true) }).prefault({}),
  sw: z.object(openApiOptionsShape).prefault({}),
});
export type DocumentSettings = z.output<typeof documentSettingsSchema>;
