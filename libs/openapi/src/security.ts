import { CallContext, isIgnored, type CallInfo } from '@svcboot/entry-core';
import { HTTP_REQUEST } from '@svcboot/entry-core/internal/call/http-request';
import type protobuf from 'protobufjs';

const NO_HEADERS = { get: () => undefined, set: () => undefined };

/** One security scheme, as OpenAPI 2.0 (`securityDefinitions`) and 3.1 (`components.securitySchemes`) write it; no v2 form for a cookie. */
export interface SecurityScheme {
  v2: Record<string, unknown> | undefined;
  v3: Record<string, unknown>;
}

/** A security requirement: scheme names, all needed together; an operation lists alternatives. */
export type SecurityRequirement = Record<string, string[]>;

/** What the documents say about the entry's guards (`middleware.jwt`, `middleware.auth`). */
export interface OpenApiSecurity {
  schemes: Record<string, SecurityScheme>;
  /** The alternatives a call of this route must meet; undefined when no guard checks it. */
  requirementOf(route: {
    method: protobuf.Method;
    httpMethod: string;
    pathTemplate: string;
  }): SecurityRequirement[] | undefined;
}

/** The parts of `middleware.jwt` and `middleware.auth` the documents depend on (validated config). */
export interface GuardsConfig {
  jwt?: { enabled: boolean; ignore: readonly string[]; tokenLookup: string; authScheme: string };
  auth?: {
    enabled: boolean;
    ignore: readonly string[];
    basic: readonly unknown[];
    apiKey: readonly unknown[];
  };
}

/** The scheme of one `tokenLookup` item (`header:Authorization`, `query:token`, `cookie:jwt`). */
function jwtScheme(item: string, authScheme: string): [string, SecurityScheme] | undefined {
  const colon = item.indexOf(':');
  if (colon < 0) return undefined;
  const kind = item.slice(0, colon).trim();
  const name = item.slice(colon + 1).trim();
  const scheme = authScheme.trim();
  if (
    kind === 'header' &&
    name.toLowerCase() === 'authorization' &&
    scheme.toLowerCase() === 'bearer'
  )
    return [
      'bearerAuth',
      {
        // OpenAPI 2.0 has no bearer scheme: the header, with "Bearer " typed before the token.
        v2: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'A JWT, sent as "Bearer <token>"',
        },
        v3: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    ];
  if (kind !== 'header' && kind !== 'query' && kind !== 'cookie') return undefined;
  const description =
    kind === 'header' && scheme !== '' ? `A JWT, sent as "${scheme} <token>"` : 'A JWT';
  const apiKey = { type: 'apiKey', in: kind, name, description };
  return [`jwt_${kind}_${name}`, { v2: kind === 'cookie' ? undefined : apiKey, v3: apiKey }];
}

/**
 * The security schemes of the entry's enabled guards and, per route, what it needs: JWT (a bearer
 * token, or the header, query parameter or cookie of `tokenLookup`), HTTP Basic and `X-API-Key`
 * (`middleware.auth`). A route a guard's `ignore` list names (its gRPC method, or its HTTP path
 * template by prefix or glob) does not need that guard. Undefined when no guard is on.
 */
export function securityOf(guards: GuardsConfig | undefined): OpenApiSecurity | undefined {
  const schemes: Record<string, SecurityScheme> = {};
  // Each guard: its ignore list and its alternatives (any one of them passes it).
  const checks: Array<{ ignore: readonly string[]; anyOf: string[] }> = [];
  const jwt = guards?.jwt;
  if (jwt?.enabled) {
    const anyOf: string[] = [];
    for (const item of jwt.tokenLookup.split(',')) {
      const found = jwtScheme(item.trim(), jwt.authScheme);
      if (!found) continue;
      schemes[found[0]] = found[1];
      anyOf.push(found[0]);
    }
    if (anyOf.length > 0) checks.push({ ignore: jwt.ignore, anyOf });
  }
  const auth = guards?.auth;
  if (auth?.enabled) {
    const anyOf: string[] = [];
    if (auth.basic.length > 0) {
      schemes['basicAuth'] = { v2: { type: 'basic' }, v3: { type: 'http', scheme: 'basic' } };
      anyOf.push('basicAuth');
    }
    if (auth.apiKey.length > 0) {
      const key = { type: 'apiKey', in: 'header', name: 'X-API-Key' };
      schemes['apiKeyAuth'] = { v2: key, v3: key };
      anyOf.push('apiKeyAuth');
    }
    if (anyOf.length > 0) checks.push({ ignore: auth.ignore, anyOf });
  }
  if (checks.length === 0) return undefined;
  return {
    schemes,
    requirementOf({ method, httpMethod, pathTemplate }) {
      const grpcPath = `/${method.parent?.fullName.replace(/^\./, '')}/${method.name}`;
      // What a guard matches its ignore list against on a gateway call, with the path's template.
      const info = new CallContext(
        { operation: grpcPath, apiPath: grpcPath } as CallInfo,
        NO_HEADERS,
      );
      info.set(HTTP_REQUEST, { method: httpMethod, path: pathTemplate, scheme: '', userAgent: '' });
      let alternatives: SecurityRequirement[] = [{}];
      for (const check of checks) {
        if (isIgnored(check.ignore, info)) continue;
        // Every guard applies: each alternative of one combined with each of the next.
        alternatives = alternatives.flatMap((req) =>
          check.anyOf.map((name) => ({ ...req, [name]: [] })),
        );
      }
      return Object.keys(alternatives[0]!).length === 0 ? undefined : alternatives;
    },
  };
}

/**
 * The requirements OpenAPI 2.0 can state: the alternatives whose every scheme has a 2.0 form (a
 * token in a cookie has none); undefined when none is left.
 */
export function v2Requirements(
  security: OpenApiSecurity,
  requirements: readonly SecurityRequirement[] | undefined,
): SecurityRequirement[] | undefined {
  if (!requirements) return undefined;
  const out: SecurityRequirement[] = [];
  for (const req of requirements) {
    const kept = Object.entries(req).filter(([name]) => security.schemes[name]?.v2 !== undefined);
    if (kept.length === Object.keys(req).length) out.push(req);
  }
  return out.length > 0 ? out : undefined;
}
