import type { NamingStrategy } from './naming.js';

/**
 * protoc-gen-openapiv2's generator flags that make sense at run time, with its defaults
 * (`json_names_for_fields` → `jsonNamesForFields`, ...).
 */
export interface OpenApiOptions {
  /** Field names as JSON names (lowerCamelCase) instead of proto names. */
  jsonNamesForFields: boolean;
  /** No `default` error response and no `google.rpc.Status` definition. */
  disableDefaultErrors: boolean;
  /** No `200` response. */
  disableDefaultResponses: boolean;
  /** No service-name tags on operations and at the top. */
  disableServiceTags: boolean;
  /** Tags are `<package>.<Service>`. */
  includePackageInTags: boolean;
  openapiNamingStrategy: NamingStrategy;
  /** `google.api.VisibilityRule` labels to include; elements restricted to other labels are left out. */
  visibilityRestrictionSelectors: string[];
  enumsAsInts: boolean;
  omitEnumDefaultValue: boolean;
  /** Operation ids are the method name alone. */
  simpleOperationIds: boolean;
  /** Methods marked `deprecated = true` become deprecated operations. */
  enableRpcDeprecation: boolean;
  ignoreComments: boolean;
  removeInternalComments: boolean;
  /** `update_mask` (FieldMask) is not a query parameter of PATCH bindings with a body field. */
  allowPatchFeature: boolean;
  /** collectionFormat of repeated path parameters. */
  repeatedPathParamSeparator: 'csv' | 'pipes' | 'ssv' | 'tsv';
  /** Paths in the order of the RPCs instead of sorted. */
  preserveRpcOrder: boolean;
  /** How many times one message may recur in the query parameters of one field. */
  recursiveDepth: number;
}

export const DEFAULT_OPENAPI_OPTIONS: OpenApiOptions = {
  jsonNamesForFields: true,
  disableDefaultErrors: false,
  disableDefaultResponses: false,
  disableServiceTags: false,
  includePackageInTags: false,
  openapiNamingStrategy: 'legacy',
  visibilityRestrictionSelectors: [],
  enumsAsInts: false,
  omitEnumDefaultValue: false,
  simpleOperationIds: false,
  enableRpcDeprecation: false,
  ignoreComments: false,
  removeInternalComments: false,
  allowPatchFeature: true,
  repeatedPathParamSeparator: 'csv',
  preserveRpcOrder: false,
  recursiveDepth: 1000,
};
