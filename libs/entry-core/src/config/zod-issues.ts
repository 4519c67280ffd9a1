import type { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { formatPath, type DocPath } from './config-path.js';
import { didYouMean } from './suggest.js';
import { isSecretKey } from './secrets.js';
import type { YamlSource } from './yaml-source.js';

interface ZodDefLike {
  type?: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType): ZodDefLike {
  return (schema as unknown as { _zod: { def: ZodDefLike } })._zod.def;
}

/** The object keys a schema accepts at `path`, looking through optional/default/pipe wrappers. */
export function keysAt(schema: z.ZodType, path: DocPath): string[] {
  const objects = objectsAt(schema, path);
  return [...new Set(objects.flatMap((o) => Object.keys(defOf(o).shape ?? {})))];
}

function unwrap(schema: z.ZodType): z.ZodType[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
      return def.innerType ? unwrap(def.innerType) : [];
    case 'pipe':
      return def.in ? unwrap(def.in) : [];
    case 'lazy':
      // `middleware:` is lazy (it reads the middlewares registered when boot.yaml is parsed).
      return def.getter ? unwrap(def.getter()) : [];
    case 'union':
      return (def.options ?? []).flatMap(unwrap);
    default:
      return [schema];
  }
}

function objectsAt(schema: z.ZodType, path: DocPath): z.ZodType[] {
  let current = unwrap(schema);
  for (const segment of path) {
    const next: z.ZodType[] = [];
    for (const s of current) {
      const def = defOf(s);
      if (typeof segment === 'number' && def.type === 'array' && def.element)
        next.push(...unwrap(def.element));
      const field = typeof segment === 'string' ? def.shape?.[segment] : undefined;
      if (def.type === 'object' && field !== undefined) next.push(...unwrap(field));
    }
    current = next;
  }
  return current.filter((s) => defOf(s).type === 'object');
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

function valueAt(root: unknown, path: DocPath): unknown {
  let node: unknown = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

/**
 * Turns zod issues for one entry into people's messages.
 * `base` is the entry's path in the document (e.g. ['grpc', 0]); `input` the entry's raw value.
 */
export function toConfigIssues(
  error: z.ZodError,
  schema: z.ZodType,
  input: unknown,
  base: DocPath,
  entryName: string | undefined,
  source: YamlSource,
  /** The message for a key under `middleware:` that no registered middleware owns, when a package is known for it. */
  unknownMiddleware?: (key: string) => string | undefined,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    const rel = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const full = [...base, ...rel];
    const at = (p: DocPath, message: string, onKey = false): ConfigIssue => ({
      path: formatPath(p, entryName),
      message,
      ...(onKey ? source.keyPosition(p) : source.position(p)),
    });
    const actual = valueAt(input, rel);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = keysAt(schema, rel);
        const underMiddleware = rel[rel.length - 1] === 'middleware';
        for (const key of issue.keys) {
          const packaged = underMiddleware ? unknownMiddleware?.(key) : undefined;
          if (packaged !== undefined) {
            out.push(at([...full, key], packaged, true));
            continue;
          }
          out.push(
            at(
              [...full, key],
              `unknown key "${key}"${didYouMean(key, known)}${known.length ? ` (allowed: ${known.join(', ')})` : ''}`,
              true,
            ),
          );
        }
        break;
      }
      case 'invalid_type': {
        const last = rel[rel.length - 1];
        if (actual === undefined) {
          out.push(at(full, `required field is missing (expected ${issue.expected})`));
        } else {
          const shown =
            typeof last === 'string' && isSecretKey(last)
              ? ''
              : ` ${JSON.stringify(actual)?.slice(0, 60) ?? ''}`;
          out.push(at(full, `expected ${issue.expected}, got ${describeType(actual)}${shown}`));
        }
        break;
      }
      case 'invalid_value':
        out.push(
          at(
            full,
            `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(actual)}${typeof actual === 'string' ? didYouMean(actual, issue.values.map(String)) : ''}`,
          ),
        );
        break;
      default: {
        // A custom issue may carry a stable code: `ctx.addIssue({ ..., params: { code } })`.
        const code = (issue as { params?: { code?: unknown } }).params?.code;
        out.push({ ...at(full, issue.message), ...(typeof code === 'string' ? { code } : {}) });
      }
    }
  }
  return out;
}
