import { z } from '@svcboot/entry-core/internal/zod';

/**
 * protoc-gen-openapiv2's flags for the generated documents, with its defaults: the `sw` section of
 * a grpc entry (entry-grpc's schema spreads this shape) and what `buildOpenApiDocuments` reads.
 */
export const openApiOptionsShape = {
  jsonNamesForFields: z
    .boolean()
    .default(true)
    .describe('Field names as their JSON names (lowerCamelCase) instead of the .proto names'),
  disableDefaultErrors: z
    .boolean()
    .default(false)
    .describe('Leave out the default error response (google.rpc.Status)'),
  disableDefaultResponses: z
    .boolean()
    .default(false)
    .describe('Leave out the default 200 response'),
  disableServiceTags: z.boolean().default(false).describe('No tag per service'),
  includePackageInTags: z.boolean().default(false).describe('Tags named package.Service'),
  openapiNamingStrategy: z
    .enum(['legacy', 'simple', 'fqn', 'package'])
    .default('legacy')
    .describe('How definitions are named: legacy (v1Shelf), simple, fqn or package'),
  visibilityRestrictionSelectors: z
    .array(z.string().min(1))
    .default([])
    .describe('google.api.visibility labels whose restricted elements are shown'),
  enumsAsInts: z.boolean().default(false).describe('Enums as integers instead of their names'),
  omitEnumDefaultValue: z.boolean().default(false).describe('Leave the zero value out of enums'),
  simpleOperationIds: z
    .boolean()
    .default(false)
    .describe('Operation ids without the service name (Method instead of Service_Method)'),
  enableRpcDeprecation: z
    .boolean()
    .default(false)
    .describe('Mark operations of deprecated RPCs deprecated'),
  ignoreComments: z.boolean().default(false).describe('Leave proto comments out'),
  removeInternalComments: z
    .boolean()
    .default(false)
    .describe('Remove (-- internal --) parts of comments'),
  allowPatchFeature: z
    .boolean()
    .default(true)
    .describe(
      'protoc-gen-openapiv2 allow_patch_feature: a PATCH whose body is a field leaves the FieldMask out of the documented body',
    ),
  repeatedPathParamSeparator: z
    .enum(['csv', 'pipes', 'ssv', 'tsv'])
    .default('csv')
    .describe('How a repeated field in the path is joined: csv, pipes, ssv or tsv'),
  preserveRpcOrder: z
    .boolean()
    .default(false)
    .describe("Keep the RPCs' order in paths instead of sorting them"),
  recursiveDepth: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe('How deep recursive messages are expanded in query parameters'),
};

/** `protos:` of a grpc entry: the .proto files, their import roots, and binary descriptor sets. */
export const protosSchema = z
  .strictObject({
    files: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'The .proto files whose services are served, relative to the working folder or includeDirs',
      ),
    includeDirs: z
      .array(z.string().min(1))
      .default([])
      .describe('Import roots for the .proto files (e.g. api, third-party/googleapis)'),
    descriptorSets: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'Binary FileDescriptorSets (`buf build -o api.binpb`, `protoc --include_imports --descriptor_set_out`).',
      ),
  })
  .prefault({})
  .describe(
    'The .proto files to load (files, relative to includeDirs), their import roots, and binary descriptor sets',
  );

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
