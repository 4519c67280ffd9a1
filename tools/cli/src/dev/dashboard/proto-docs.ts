import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/*
 * What proto-loader's definitions leave out: the comments of services, methods and fields, and
 * the buf.validate rules on fields. Read from the same .proto files with the protobufjs the
 * service itself installs (entry-grpc brings it), comments kept. Anything it cannot read gives no
 * docs: the catalog is then as proto-loader alone makes it, never an error.
 */

interface ReflectionLike {
  name: string;
  comment: string | null;
  options?: Record<string, unknown>;
}
interface TypeLike extends ReflectionLike {
  fieldsArray: ReflectionLike[];
}
interface MethodLike extends ReflectionLike {
  resolvedRequestType: TypeLike | null;
  resolvedResponseType: TypeLike | null;
}
interface ServiceLike extends ReflectionLike {
  methods: Record<string, MethodLike>;
}
interface RootLike {
  resolvePath: (origin: string, target: string) => string | null;
  loadSync(files: string[], options: Record<string, unknown>): RootLike;
  resolveAll(): RootLike;
  lookupService(name: string): ServiceLike;
}
interface Protobufjs {
  Root: new () => RootLike;
  common(name: string, json: Record<string, unknown>): void;
}

/** A field's comment and its buf.validate rules (`min_len: 1`), by the field's JSON name. */
export interface FieldDocs {
  comment: string | undefined;
  rules: string[];
}
export interface MethodDocs {
  comment: string | undefined;
  /** The comments of its request and response messages. */
  requestComment: string | undefined;
  responseComment: string | undefined;
  request: Map<string, FieldDocs>;
  response: Map<string, FieldDocs>;
}
export interface ServiceDocs {
  comment: string | undefined;
  methods: Map<string, MethodDocs>;
}

/** Reads the docs of one service by its full name (`chain.v1.Front`); undefined when unknown. */
export type DocsLookup = (service: string) => ServiceDocs | undefined;

const RULE_PREFIX = '(buf.validate.field).';

/**
 * The docs of the services of `files` (as the entry names them, relative to an include folder),
 * loaded with the protobufjs found from `dir`; undefined when it is not there or cannot load them.
 */
export function protoDocs(
  dir: string,
  files: readonly string[],
  includeDirs: readonly string[],
): DocsLookup | undefined {
  let pb: Protobufjs;
  let descriptor: { nested: { google: { nested: { protobuf: { nested: object } } } } };
  try {
    const require = createRequire(path.join(dir, 'package.json'));
    pb = require('protobufjs') as Protobufjs;
    descriptor = require('protobufjs/google/protobuf/descriptor.json') as typeof descriptor;
  } catch {
    return undefined;
  }
  let root: RootLike;
  try {
    // descriptor.proto (imported by option definitions such as buf/validate) as protobufjs
    // bundles it, as proto-loader registers it.
    pb.common(
      'descriptor',
      descriptor.nested.google.nested.protobuf.nested as Record<string, unknown>,
    );
    root = new pb.Root();
    const fallback = root.resolvePath.bind(root);
    const dirs = [...includeDirs, dir];
    root.resolvePath = (origin, target) => {
      if (path.isAbsolute(target)) return target;
      for (const d of dirs) {
        const full = path.join(d, target);
        if (existsSync(full)) return full;
      }
      return fallback(origin, target);
    };
    root.loadSync([...files], { alternateCommentMode: true }).resolveAll();
  } catch {
    return undefined;
  }
  return (name) => {
    let service: ServiceLike;
    try {
      service = root.lookupService(name);
    } catch {
      return undefined;
    }
    const methods = new Map<string, MethodDocs>();
    for (const [methodName, m] of Object.entries(service.methods))
      methods.set(methodName, {
        comment: commentOf(m),
        requestComment: m.resolvedRequestType ? commentOf(m.resolvedRequestType) : undefined,
        responseComment: m.resolvedResponseType ? commentOf(m.resolvedResponseType) : undefined,
        request: fieldDocs(m.resolvedRequestType),
        response: fieldDocs(m.resolvedResponseType),
      });
    return { comment: commentOf(service), methods };
  };
}

function commentOf(r: ReflectionLike): string | undefined {
  const c = r.comment?.trim();
  return c === undefined || c === '' ? undefined : c;
}

function fieldDocs(type: TypeLike | null): Map<string, FieldDocs> {
  const out = new Map<string, FieldDocs>();
  for (const f of type?.fieldsArray ?? [])
    out.set(f.name, { comment: commentOf(f), rules: validationRules(f.options) });
  return out;
}

/**
 * A field's buf.validate rules as short texts, from protobufjs's flat option keys:
 * `(buf.validate.field).string.min_len` → `min_len: 1`, `(buf.validate.field).required` →
 * `required: true`, `(buf.validate.field).repeated.items.string.min_len` → `items.string.min_len: 1`.
 */
export function validationRules(options: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(options ?? {})) {
    if (!key.startsWith(RULE_PREFIX)) continue;
    const parts = key.slice(RULE_PREFIX.length).split('.');
    const name = parts.length > 1 ? parts.slice(1).join('.') : parts[0]!;
    out.push(`${name}: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
  }
  return out;
}
