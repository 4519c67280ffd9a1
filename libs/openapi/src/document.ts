import type protobuf from 'protobufjs';
import type { HttpBinding } from './api/rules.js';
import type { OpenApiSecurity } from './security.js';

/** One HTTP binding of an RPC to document. */
export interface OpenApiRoute {
  binding: HttpBinding;
  method: protobuf.Method;
}

export interface OpenApiSource {
  /** The bindings, in the order of the services and their methods (additional bindings after the first). */
  routes: readonly OpenApiRoute[];
  /** The documented services (tags), those without bindings included. */
  services: readonly protobuf.Service[];
  /** `info` when no `openapiv2_swagger` option sets it. */
  info: { title: string; version: string; description?: string };
  /** The entry's guards (jwt, auth): their schemes, and which routes need them. */
  security?: OpenApiSecurity;
}

export type OpenApiDocument = Record<string, unknown>;
