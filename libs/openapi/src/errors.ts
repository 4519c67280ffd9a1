import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/internal/errors';

/** @svcboot/openapi's errors (codes documented in README.md, "Errors"). */
export const openapiErrors = {
  SVC_OPENAPI_SETTINGS_INVALID: {
    when: '`buildOpenApiDocuments` was given settings that a grpc entry would refuse (an unknown `sw` flag value, a path that is not a string …)',
    fix: 'correct each listed path',
    message: (issues: readonly string[]) => `invalid OpenAPI settings: ${issues.join('; ')}`,
  },
  SVC_OPENAPI_PROTOS: {
    when: 'a `protos.files` file cannot be read or parsed, or an import is not found under `protos.includeDirs`',
    fix: 'fix the file or path the message names (line and column are given for parse errors)',
    message: (where: string, cause: string) => `${where}: ${cause}`,
  },
  SVC_OPENAPI_DESCRIPTOR_SETS: {
    when: 'a `protos.descriptorSets` file cannot be read, is not a binary FileDescriptorSet, lacks an import, or does not resolve',
    fix: 'write it with `buf build -o <file>` or `protoc --include_imports --descriptor_set_out=<file>`',
    message: (configPath: string, cause: string) => `${configPath}.protos.descriptorSets: ${cause}`,
  },
  SVC_OPENAPI_MAPPING_FILE: {
    when: 'a `gwMappingFiles` file cannot be read, is not a `google.api.Service` yaml, or has a rule without selector or pattern',
    fix: 'fix the file the message names',
    message: (configPath: string, cause: string) => `${configPath}.gwMappingFiles: ${cause}`,
  },
  SVC_OPENAPI_FAILED: {
    when: 'the generator refuses the protos or rules (a rule naming a field the request lacks, a streaming method whose rule has no body `*` …)',
    fix: 'read the cause after the colon (usually a rule or message the generator refuses)',
    message: (configPath: string, cause: string) =>
      `${configPath}.sw: cannot build the OpenAPI document: ${cause}`,
  },
} satisfies ErrorCatalogue;

/** Throws @svcboot/openapi's catalogued errors. */
export const openapiError = errorFactory(openapiErrors);
