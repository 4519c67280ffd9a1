import { described, z } from '@svcboot/entry-core/internal/zod';

// One instance for every field each fits (a zod schema is immutable; every instance built costs a
// start ~6 us: entry-core's src/schema.ts has the same ones, which this package does not import,
// so that a start loads no more of entry-core's files).
const off = z.boolean().default(false);
const on = z.boolean().default(true);
const nonEmptyTexts = z.array(z.string().min(1)).default([]);

/**
 * protoc-gen-openapiv2's flags for the generated documents, with its defaults: the `sw` section of
 * a grpc entry (entry-grpc's schema spreads this shape) and what `buildOpenApiDocuments` reads.
 */
export const openApiOptionsShape = {
  jsonNamesForFields: on.describe(
    'Field names as their JSON names (lowerCamelCase) instead of the .proto names',
  ),
  disableDefaultErrors: off.describe('Leave out the default error response (google.rpc.Status)'),
  disableDefaultResponses: off.describe('Leave out the default 200 response'),
  disableServiceTags: off.describe('No tag per service'),
  includePackageInTags: off.describe('Tags named package.Service'),
  openapiNamingStrategy: described(
    z.enum(['legacy', 'simple', 'fqn', 'package']).default('legacy'),
    'How definitions are named: legacy (v1Shelf), simple, fqn or package',
  ),
  visibilityRestrictionSelectors: nonEmptyTexts.describe(
    'google.api.visibility labels whose restricted elements are shown',
  ),
  enumsAsInts: off.describe('Enums as integers instead of their names'),
  omitEnumDefaultValue: off.describe('Leave the zero value out of enums'),
  simpleOperationIds: off.describe(
    'Operation ids without the service name (Method instead of Service_Method)',
  ),
  enableRpcDeprecation: off.describe('Mark operations of deprecated RPCs deprecated'),
  ignoreComments: off.describe('Leave proto comments out'),
  removeInternalComments: off.describe('Remove (-- internal --) parts of comments'),
  allowPatchFeature: on.describe(
    'protoc-gen-openapiv2 allow_patch_feature: a PATCH whose body is a field leaves the FieldMask out of the documented body',
  ),
  repeatedPathParamSeparator: described(
    z.enum(['csv', 'pipes', 'ssv', 'tsv']).default('csv'),
    'How a repeated field in the path is joined: csv, pipes, ssv or tsv',
  ),
  preserveRpcOrder: off.describe("Keep the RPCs' order in paths instead of sorting them"),
  recursiveDepth: described(
    z.number().int().positive().default(1000),
    'How deep recursive messages are expanded in query parameters',
  ),
};

/** `protos:` of a grpc entry: the .proto files, their import roots, and binary descriptor sets. */
export const protosSchema = described(
  z
    .strictObject({
      files: nonEmptyTexts.describe(
        'The .proto files whose services are served, relative to the working folder or includeDirs',
      ),
      includeDirs: nonEmptyTexts.describe(
        'Import roots for the .proto files (e.g. api, third-party/googleapis)',
      ),
      descriptorSets: nonEmptyTexts.describe(
        'Binary FileDescriptorSets (`buf build -o api.binpb`, `protoc --include_imports --descriptor_set_out`).',
      ),
    })
    .prefault({}),
  'The .proto files to load (files, relative to includeDirs), their import roots, and binary descriptor sets',
);

/**
 * The settings of a grpc entry the documents depend on, as boot.yaml writes them: unknown keys of
 * `sw` (its `enabled`, `path`) and of `gwOption` (the gateway's other options) are ignored.
 */
export const documentSettingsSchema = z.object({
  protos: protosSchema,
  gwMappingFiles: nonEmptyTexts,
  generateUnboundMethods: off,
  gwOption: z.object({ allowPatchFeature: on }).prefault({}),
  sw: z.object(openApiOptionsShape).prefault({}),
});
export type DocumentSettings = z.output<typeof documentSettingsSchema>;
