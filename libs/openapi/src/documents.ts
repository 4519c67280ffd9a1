import path from 'node:path';
import { errorMessage } from '@svcboot/entry-core/internal/errors';
import protobuf from 'protobufjs';
import { z } from '@svcboot/entry-core/internal/zod';
import { loadDescriptorSets } from './api/descriptor-set.js';
import { loadProtoRoot } from './api/protos.js';
import { rulesFromAnnotations, rulesFromMappingFile, type HttpBinding } from './api/rules.js';
import { openapiError } from './errors.js';
import { documentSettingsSchema, type DocumentSettings } from './settings.js';
import { sourceFromRoutes, type DocumentedRoute } from './source.js';
import { buildOpenApiV2, type OpenApiDocument, type OpenApiSource } from './v2.js';
import { buildOpenApiV3 } from './v3.js';
import { securityOf, type GuardsConfig } from './security.js';

/** The OpenAPI 2.0 document and, when it can be built, the 3.1 one. */
export interface OpenApiDocuments {
  v2: OpenApiDocument;
  /** Undefined when protoc-gen-openapiv3 would refuse the input (e.g. duplicate operation ids). */
  v3: OpenApiDocument | undefined;
  /** Why there is no 3.1 document. */
  v3Error?: string;
}

/**
 * Both documents of a set of routes, with the `sw` options: what a grpc entry serves at
 * `<sw.path>swagger.json` and `<sw.path>openapi.json`. Throws when the 2.0 document cannot be
 * built. `sw` may carry the section's other keys (`enabled`, `path`): they are not generator flags.
 */
export function openApiDocumentsOf(
  routes: readonly DocumentedRoute[],
  services: readonly protobuf.Service[],
  info: OpenApiSource['info'],
  sw: DocumentSettings['sw'] & { enabled?: unknown; path?: unknown },
  guards?: GuardsConfig,
): OpenApiDocuments {
  const { enabled: _enabled, path: _path, ...options } = sw;
  const security = securityOf(guards);
  const source = { ...sourceFromRoutes(routes, services, info), ...(security ? { security } : {}) };
  const v2 = buildOpenApiV2(source, options);
  try {
    return { v2, v3: buildOpenApiV3(source, options) };
  } catch (err) {
    return { v2, v3: undefined, v3Error: errorMessage(err) };
  }
}

/** What `buildOpenApiDocuments` reads: the sections of one `grpc:` entry of boot.yaml, as written there. */
export interface OpenApiDocumentsInput {
  /** `protos: { files, includeDirs, descriptorSets }`; every service of these files and sets is documented. */
  protos?: { files?: string[]; includeDirs?: string[]; descriptorSets?: string[] };
  gwMappingFiles?: string[];
  generateUnboundMethods?: boolean;
  /** Only `gwOption.allowPatchFeature` shapes the routes. */
  gwOption?: { allowPatchFeature?: boolean };
  /** The `sw` section: protoc-gen-openapiv2's flags (`jsonNamesForFields`, ...); defaults as in boot.yaml. */
  sw?: Record<string, unknown>;
  /**
   * The entry's `middleware` (as in boot.yaml): an enabled `jwt` or `auth` gives the documents its
   * security schemes and the operations it guards their `security` (its `ignore` list respected).
   * Only `enabled`, `ignore`, jwt's `tokenLookup`/`authScheme` and whether auth lists `basic` or
   * `apiKey` items are read; keys and secrets are not (they may be left out).
   */
  middleware?: Record<string, unknown>;
  /** `info` when no `openapiv2_swagger` option sets it (the entry uses the app's name, version, description). */
  appName: string;
  appVersion?: string;
  appDescription?: string;
  /** The folder relative paths are read from (the service's working folder); default process.cwd(). */
  baseDir?: string;
  /** `grpc[0]`-like prefix for errors and warnings; default `grpc`. */
  configPath?: string;
  /** Rules naming no method of the protos are skipped with a warning; default: dropped silently. */
  warn?(message: string): void;
}

/**
 * What the documents read of `middleware.jwt` and `middleware.auth`: whether each is on, its
 * ignore list, where a JWT is looked for, and whether Basic credentials or API keys are listed
 * (never their values). Other keys (the secrets) are not read, so unresolved ones do no harm.
 */
const guardsSchema = z
  .object({
    jwt: z
      .object({
        enabled: z.boolean().default(false),
        ignore: z.array(z.string()).default([]),
        tokenLookup: z.string().default('header:Authorization'),
        authScheme: z.string().default('Bearer'),
      })
      .optional(),
    auth: z
      .object({
        enabled: z.boolean().default(false),
        ignore: z.array(z.string()).default([]),
        basic: z.array(z.unknown()).default([]),
        apiKey: z.array(z.unknown()).default([]),
      })
      .optional(),
  })
  .default({});

function servicesIn(ns: protobuf.NamespaceBase, out: protobuf.Service[] = []): protobuf.Service[] {
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Service) out.push(child);
    else if (child instanceof protobuf.Namespace) servicesIn(child, out);
  }
  return out;
}

/** A method of a documented service, by its gRPC path `/<service>/<method>`. */
interface MethodRef {
  service: string;
  name: string;
  requestStream: boolean;
  root: protobuf.Root;
}

/** A synthetic binding for an RPC without one: `POST /<pkg>.<Service>/<Method>` with body `*` (as the gateway serves it). */
function unboundBinding(m: MethodRef): HttpBinding {
  const grpcPath = `/${m.service}/${m.name}`;
  return {
    selector: `${m.service}.${m.name}`,
    method: 'POST',
    pathTemplate: grpcPath,
    body: '*',
    responseBody: '',
    source: `unbound method ${grpcPath}`,
  };
}

/**
 * The OpenAPI documents a grpc entry with these settings serves when every service of its
 * `protos.files` and `protos.descriptorSets` is added, built from the descriptors alone: no
 * server, no app, no port, no gRPC library. The bindings are found as the entry's gateway finds
 * them (mapping files first, then each service's `google.api.http` annotations, then unbound
 * methods when `generateUnboundMethods`), so the result equals what `<sw.path>swagger.json`
 * serves. Rules the gateway would refuse at bootstrap for other reasons (a path variable naming
 * no field) are refused here by the generator itself.
 */
export async function buildOpenApiDocuments(
  input: OpenApiDocumentsInput,
): Promise<OpenApiDocuments> {
  const configPath = input.configPath ?? 'grpc';
  const parsed = documentSettingsSchema.extend({ middleware: guardsSchema }).safeParse({
    protos: input.protos,
    gwMappingFiles: input.gwMappingFiles,
    generateUnboundMethods: input.generateUnboundMethods,
    gwOption: input.gwOption,
    sw: input.sw,
    middleware: input.middleware,
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (i) => `${[configPath, ...i.path.map(String)].join('.')}: ${i.message}`,
    );
    throw openapiError('SVC_OPENAPI_SETTINGS_INVALID', [issues]);
  }
  const c = parsed.data;
  const baseDir = path.resolve(input.baseDir ?? process.cwd());
  let root: protobuf.Root;
  try {
    root = loadProtoRoot(
      c.protos.files.map((f) => path.resolve(baseDir, f)),
      c.protos.includeDirs,
      baseDir,
    );
  } catch (err) {
    throw openapiError('SVC_OPENAPI_PROTOS', [`${configPath}.protos`, errorMessage(err)], {
      cause: err,
    });
  }
  let sets: protobuf.Root | undefined;
  try {
    sets = loadDescriptorSets(c.protos.descriptorSets, baseDir);
  } catch (err) {
    throw openapiError('SVC_OPENAPI_DESCRIPTOR_SETS', [configPath, errorMessage(err)], {
      cause: err,
    });
  }
  // As the entry: a service of protos.files wins over the same name in a descriptor set.
  const documented: protobuf.Service[] = [];
  const methods = new Map<string, MethodRef>();
  const roots: Array<[protobuf.Root, protobuf.Service[]]> = [[root, servicesIn(root)]];
  if (sets) roots.push([sets, servicesIn(sets)]);
  for (const [r, services] of roots) {
    for (const svc of services) {
      const name = svc.fullName.replace(/^\./, '');
      if (documented.some((d) => d.fullName === svc.fullName)) continue;
      documented.push(svc);
      for (const m of svc.methodsArray)
        methods.set(`/${name}/${m.name}`, {
          service: name,
          name: m.name,
          requestStream: m.requestStream ?? false,
          root: r,
        });
    }
  }
  const bindings: HttpBinding[] = [];
  for (const file of c.gwMappingFiles.map((f) => path.resolve(baseDir, f))) {
    try {
      bindings.push(...(await rulesFromMappingFile(file)));
    } catch (err) {
      throw openapiError('SVC_OPENAPI_MAPPING_FILE', [configPath, errorMessage(err)], {
        cause: err,
      });
    }
  }
  for (const svc of documented) bindings.push(...rulesFromAnnotations(svc));
  const warn = input.warn ?? (() => undefined);
  const routes: DocumentedRoute[] = [];
  const bound = new Set<string>();
  for (const b of bindings) {
    const dot = b.selector.lastIndexOf('.');
    const grpcPath = `/${b.selector.slice(0, dot)}/${b.selector.slice(dot + 1)}`;
    const m = methods.get(grpcPath);
    if (!m) {
      warn(`${b.source}: no added service has ${b.selector}; its HTTP rule is skipped`);
      continue;
    }
    // The request body is the stream of messages: body "*", or no body (grpc-gateway's
    // StreamEmptyRpc), never a field.
    if (m.requestStream && b.body !== '*' && b.body !== '')
      throw openapiError('SVC_OPENAPI_FAILED', [
        configPath,
        `${b.source}: rule ${b.method} ${b.pathTemplate} of ${grpcPath}: ${grpcPath} is client- or bidi-streaming; its rule needs body "*" or no body`,
      ]);
    routes.push({ binding: b, method: m, requestType: { root: m.root } });
    bound.add(grpcPath);
  }
  if (c.generateUnboundMethods) {
    for (const [grpcPath, m] of methods) {
      if (bound.has(grpcPath) || m.requestStream) continue;
      routes.push({ binding: unboundBinding(m), method: m, requestType: { root: m.root } });
    }
  }
  const info = {
    title: input.appName,
    version: input.appVersion ?? '',
    description: input.appDescription,
  };
  try {
    return openApiDocumentsOf(routes, documented, info, c.sw, c.middleware);
  } catch (err) {
    throw openapiError('SVC_OPENAPI_FAILED', [configPath, errorMessage(err)], { cause: err });
  }
}
