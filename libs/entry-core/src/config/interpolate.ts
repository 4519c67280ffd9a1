import type { ConfigIssue } from '../errors.js';
import { formatPath, type DocPath } from './config-path.js';
import { parseYamlScalar } from './yaml-library.js';
import type { YamlSource } from './yaml-source.js';

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_VAR = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export interface InterpolationContext {
  env: Readonly<Record<string, string | undefined>>;
  source: YamlSource;
  issues: ConfigIssue[];
  /** Human name of the entry at path[1], for error paths. */
  entryName?: string;
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string value under `value` (keys are left alone).
 * A plain (unquoted) scalar that is exactly one reference takes the type its text has in YAML,
 * so `port: ${PORT:-8080}` is a number; quoted scalars stay strings.
 */
export function interpolate(value: unknown, path: DocPath, ctx: InterpolationContext): unknown {
  if (typeof value === 'string') return interpolateString(value, path, ctx);
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, [...path, i], ctx));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value))
      out[key] = interpolate(child, [...path, key], ctx);
    return out;
  }
  return value;
}

function interpolateString(text: string, path: DocPath, ctx: InterpolationContext): unknown {
  if (!text.includes('${')) return text;
  let missing = false;
  const replaced = text.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = ctx.env[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    missing = true;
    ctx.issues.push({
      path: formatPath(path, ctx.entryName),
      message: `environment variable ${name} is not set and has no default; set it, or write \${${name}:-default}`,
      ...ctx.source.position(path),
    });
    return '';
  });
  if (missing) return text;
  if (WHOLE_VAR.test(text) && ctx.source.isPlainScalar(path)) return asYamlScalar(replaced);
  return replaced;
}

function asYamlScalar(text: string): unknown {
  try {
    const parsed = parseYamlScalar(text);
    if (typeof parsed === 'number' || typeof parsed === 'boolean') return parsed;
  } catch {
    // Not a scalar YAML understands: keep the text.
  }
  return text;
}
