/**
 * @svcboot/openapi: the OpenAPI 2.0 and 3.1 documents of a gRPC API and its HTTP rules, as
 * protoc-gen-openapiv2/v3 write them, built from the descriptors alone (no server). entry-grpc
 * serves them at `<sw.path>`; the `svc pb openapi` command writes them to files.
 */
export {
  buildOpenApiDocuments,
  openApiDocumentsOf,
  type OpenApiDocuments,
  type OpenApiDocumentsInput,
} from './documents.js';
export { sourceFromRoutes, type DocumentedRoute } from './source.js';
export { buildOpenApiV2 } from './v2.js';
export { buildOpenApiV3 } from './v3.js';
export type { OpenApiDocument, OpenApiRoute, OpenApiSource } from './document.js';
export { DEFAULT_OPENAPI_OPTIONS, type OpenApiOptions } from './options.js';
export type { NamingStrategy } from './naming.js';
export {
  openApiOptionsShape,
  protosSchema,
  documentSettingsSchema,
  type DocumentSettings,
} from './settings.js';
export {
  securityOf,
  type GuardsConfig,
  type OpenApiSecurity,
  type SecurityRequirement,
  type SecurityScheme,
} from './security.js';
export { openapiErrors } from './errors.js';
// The API description the documents (and entry-grpc's gateway) are built from.
export { loadProtoRoot } from './api/protos.js';
export { restoreMapFields } from './api/map-fields.js';
export {
  encodeHttpRule,
  loadDescriptorSets,
  readDescriptorSetFiles,
  rootOfFiles,
  type SetFile,
} from './api/descriptor-set.js';
export { extensionValues } from './annotations.js';
export type { Schema } from './schema.js';
export { applyValidateRules } from './validate-rules.js';
export { rulesFromAnnotations, rulesFromMappingFile, type HttpBinding } from './api/rules.js';
