import { errorMessage } from '@svcboot/entry-core/toolkit';
import type { GatewayInput, GatewayParts, UiMount } from '@svcboot/grpc-server/protocol';
import { grpcError } from '@svcboot/grpc-server/protocol';
import { openApiDocumentsOf, type GuardsConfig } from '@svcboot/openapi';
import { Gateway } from './gateway.js';
import { attachValidateRules } from './openapi/validate-rules.js';
import { routesOf, webPreflightRoutes } from './routes.js';
import { rapiDoc, swaggerUi } from './ui.js';

/**
 * The entry's REST gateway, its OpenAPI documents and UIs, from its services, their protos and
 * boot.yaml (what @svcboot/grpc-server calls at bootstrap when this package is installed).
 */
export async function buildGateway(input: GatewayInput): Promise<GatewayParts> {
  const c = input.config;
  const { configPath, rootFor, services } = input;
  if (input.typed && !(await attachValidateRules(input.typed.root, input.typed.files)))
    input.warn(
      `${configPath}: a typed service's protos have buf.validate rules, but @bufbuild/protovalidate is not installed: the OpenAPI documents leave them out (npm install @bufbuild/protovalidate)`,
    );
  const gateway = new Gateway(
    input.chain,
    {
      marshal: {
        ...c.gwOption.marshal,
        emitUnpopulated: c.gwOption.marshal.emitUnpopulated || c.enableSvcGwOption,
        omitUnsetValue: c.enableSvcGwOption,
      },
      indent: c.gwOption.marshal.indent,
      discardUnknown: c.gwOption.unmarshal.discardUnknown,
      svcStyle: c.enableSvcGwOption,
      maxBodyBytes: c.maxRecvMsgSizeBytes,
      methodNotAllowed405: c.gwOption.routing.methodNotAllowed405,
      disablePathLengthFallback: c.gwOption.routing.disablePathLengthFallback,
      disableHttpMethodOverride: c.gwOption.routing.disableHttpMethodOverride,
      allowPatchFeature: c.gwOption.allowPatchFeature,
      maxJsonDepth: c.gwOption.maxJsonDepth,
      errorModel: c.errorModel,
      compression: c.compression,
      maxQueryParams: c.gwOption.maxQueryParams,
      sseHeartbeatMs: c.gwOption.sseHeartbeatMs,
      maxUploadBytes: c.gwOption.maxUploadBytes ?? c.maxRecvMsgSizeBytes,
    },
    input.interceptors,
  );
  const { routes, documented } = await routesOf({
    services,
    rootFor,
    gwMappingFiles: c.gwMappingFiles,
    generateUnboundMethods: c.generateUnboundMethods,
    options: gateway.options,
    configPath,
    warn: input.warn,
  });
  for (const route of routes) gateway.add(route);
  // Browsers' CORS preflights to the gRPC paths, for gRPC-Web and Connect calls alike.
  if (input.browserPreflights)
    for (const route of webPreflightRoutes({ services, rootFor, options: gateway.options }))
      gateway.addWebPreflight(route);

  let openApi = '';
  let openApiV3 = '';
  try {
    const docs = openApiDocumentsOf(
      gateway.routes,
      documented,
      { title: input.app.name, version: input.app.version, description: input.app.description },
      c.sw,
      c.middleware as GuardsConfig,
    );
    openApi = JSON.stringify(docs.v2, null, 2);
    openApiV3 = docs.v3 ? JSON.stringify(docs.v3, null, 2) : '';
    // protoc-gen-openapiv3 refuses some inputs (duplicate operation ids) that v2 accepts.
    if (docs.v3Error) input.warn(`${configPath}.sw: no OpenAPI 3.1 document: ${docs.v3Error}`);
  } catch (err) {
    const error = grpcError('SVC_GRPC_OPENAPI_FAILED', [configPath, errorMessage(err)], {
      cause: err,
    });
    // Only an entry that serves the document fails for it.
    if (c.sw.enabled || c.docs.enabled) throw error;
    input.warn(error.message);
  }

  const document = (): string => openApi;
  const documentV3 = openApiV3 ? (): string => openApiV3 : undefined;
  const uis: UiMount[] = [];
  if (c.sw.enabled)
    uis.push(swaggerUi(c.sw.path, document, input.app.name, documentV3, c.sw.headers));
  if (c.docs.enabled)
    uis.push(
      rapiDoc(c.docs.path, document, input.app.name, documentV3, {
        headers: c.docs.headers,
        theme: c.docs.style.theme,
      }),
    );
  return { gateway, uis, openApi, openApiV3 };
}
