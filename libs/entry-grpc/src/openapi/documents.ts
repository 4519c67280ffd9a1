import path from 'node:path';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { errorMessage } from '@svcboot/entry-core';
import protobuf from 'protobufjs';
import { z } from 'zod';
import type { GatewayRoute } from '../gateway/route.js';
import { loadDescriptorSets } from '../descriptor-set.js';
import { grpcError } from '../errors.js';
import { loadProtoRoot } from '../protos.js';
import { routesOf } from '../routes.js';
import { grpcSchema, type GrpcEntryConfig } from '../schema.js';
import { ServiceSet } from '../services.js';
import { sourceFromRoutes } from './source.js';
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
 * Both documents of an entry's routes, with its `sw` options: what the entry serves at
 * `<sw.path>swagger.json` and `<sw.path>openapi.json`. Throws when the 2.0 document cannot be built.
 */
export function openApiDocumentsOf(
  routes: readonly GatewayRoute[],
  services: readonly protobuf.Service[],
  info: OpenApiSource['info'],
  sw: GrpcEntryConfig['sw'],
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

/** The sections of a grpc entry the documents depend on, validated with the entry's own schema. */
const documentSchema = grpcSchema.pick({
  protos: true,
  gwMappingFiles: true,
  generateUnboundMethods: true,
  gwOption: true,
  sw: true,
});

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

/** A grpc-js definition of a service of a loaded root (never served: only its paths and streaming matter). */
function definitionOf(service: protobuf.Service): ServiceDefinition {
  const name = service.fullName.replace(/^\./, '');
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methodsArray) {
    m.resolve();
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    out[m.name] = {
      path: `/${name}/${m.name}`,
      originalName: m.name,
      requestStream: m.requestStream ?? false,
      responseStream: m.responseStream ?? false,
      requestSerialize: (v: unknown) =>
        Buffer.from(req.encode(req.fromObject(v as Record<string, unknown>)).finish()),
      requestDeserialize: (b: Buffer) => req.decode(b),
      responseSerialize: (v: unknown) =>
        Buffer.from(res.encode(res.fromObject(v as Record<string, unknown>)).finish()),
      responseDeserialize: (b: Buffer) => res.decode(b),
    };
  }
  return out as ServiceDefinition;
}

function servicesIn(ns: protobuf.NamespaceBase, out: protobuf.Service[] = []): protobuf.Service[] {
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Service) out.push(child);
    else if (child instanceof protobuf.Namespace) servicesIn(child, out);
  }
  return out;
}

/**
 * The OpenAPI documents a grpc entry with these settings builds at bootstrap when every service of
 * its `protos.files` and `protos.descriptorSets` is added, built from the descriptors alone: no server, no app, no port.
 * Protos and gateway rules are loaded by the entry's own code and the `sw` options are validated
 * by the entry's schema, so the result equals what `<sw.path>swagger.json` serves.
 */
export async function buildOpenApiDocuments(
  input: OpenApiDocumentsInput,
): Promise<OpenApiDocuments> {
  const configPath = input.configPath ?? 'grpc';
  const parsed = documentSchema.extend({ middleware: guardsSchema }).safeParse({
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
    throw grpcError('SVC_GRPC_SETTINGS_INVALID', [issues]);
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
    throw grpcError('SVC_GRPC_PROTOS', [`${configPath}.protos`, errorMessage(err)], { cause: err });
  }
  let sets: protobuf.Root | undefined;
  try {
    sets = loadDescriptorSets(c.protos.descriptorSets, baseDir);
  } catch (err) {
    throw grpcError('SVC_GRPC_DESCRIPTOR_SETS', [configPath, errorMessage(err)], { cause: err });
  }
  // As the entry: a service of protos.files wins over the same name in a descriptor set.
  const services = new ServiceSet();
  const added = new Set<string>();
  for (const svc of [...servicesIn(root), ...(sets ? servicesIn(sets) : [])]) {
    if (added.has(svc.fullName)) continue;
    added.add(svc.fullName);
    services.add(definitionOf(svc), {});
  }
  const { routes, documented } = await routesOf({
    services,
    rootFor: (service) => (root.lookup(service) ? root : sets?.lookup(service) ? sets : undefined),
    gwMappingFiles: c.gwMappingFiles.map((f) => path.resolve(baseDir, f)),
    generateUnboundMethods: c.generateUnboundMethods,
    options: { allowPatchFeature: c.gwOption.allowPatchFeature },
    configPath,
    warn: input.warn ?? (() => undefined),
  });
  const info = {
    title: input.appName,
    version: input.appVersion ?? '',
    description: input.appDescription,
  };
  try {
    return openApiDocumentsOf(routes, documented, info, c.sw, c.middleware);
  } catch (err) {
    throw grpcError('SVC_GRPC_OPENAPI_FAILED', [configPath, errorMessage(err)], { cause: err });
  }
}
