import type protobuf from 'protobufjs';
import { parse as parseYaml } from '@svcboot/entry-core/internal/yaml';

/** One HTTP binding of an RPC (google.api.HttpRule without nesting). */
export interface HttpBinding {
  /** `api.v1.Greeter.Hello` */
  selector: string;
  /** Upper-case HTTP method; `custom.kind` as written. */
  method: string;
  pathTemplate: string;
  /** `""` (no body), `"*"` or a request field name. */
  body: string;
  /** `""` (the whole response) or a response field name. */
  responseBody: string;
  /** Where it came from, for error messages. */
  source: string;
}

interface RawRule {
  selector?: unknown;
  get?: unknown;
  put?: unknown;
  post?: unknown;
  delete?: unknown;
  patch?: unknown;
  custom?: { kind?: unknown; path?: unknown };
  body?: unknown;
  response_body?: unknown;
  responseBody?: unknown;
  additional_bindings?: RawRule | RawRule[];
  additionalBindings?: RawRule | RawRule[];
}

const VERBS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function flatten(selector: string, raw: RawRule, source: string, top = true): HttpBinding[] {
  const out: HttpBinding[] = [];
  let method = '';
  let pathTemplate = '';
  for (const verb of VERBS) {
    const p = str(raw[verb]);
    if (p) {
      method = verb.toUpperCase();
      pathTemplate = p;
    }
  }
  if (raw.custom && str(raw.custom.path)) {
    method = str(raw.custom.kind).toUpperCase();
    pathTemplate = str(raw.custom.path);
  }
  if (!method)
    throw new Error(
      `${source}: the HTTP rule for ${selector} has no get/put/post/delete/patch/custom pattern`,
    );
  out.push({
    selector,
    method,
    pathTemplate,
    body: str(raw.body),
    responseBody: str(raw.response_body ?? raw.responseBody),
    source,
  });
  const extra = raw.additional_bindings ?? raw.additionalBindings;
  if (extra && top) {
    for (const b of Array.isArray(extra) ? extra : [extra])
      out.push(...flatten(selector, b, source, false));
  }
  return out;
}

/** Rules of a `google.api.Service` yaml (`http.rules`). */
export async function rulesFromMappingFile(file: string): Promise<HttpBinding[]> {
  // node:fs/promises when a mapping file is read, not at every start that imports this module.
  const { readFile } = process.getBuiltinModule('node:fs/promises');
  const doc = parseYaml(await readFile(file, 'utf8')) as {
    type?: unknown;
    http?: { rules?: RawRule[] };
  } | null;
  if (!doc || typeof doc !== 'object')
    throw new Error(`${file}: not a google.api.Service yaml document`);
  if (doc.type !== undefined && doc.type !== 'google.api.Service') {
    throw new Error(`${file}: type is ${String(doc.type)}, expected google.api.Service`);
  }
  const out: HttpBinding[] = [];
  for (const rule of doc.http?.rules ?? []) {
    const selector = str(rule.selector);
    if (!selector) throw new Error(`${file}: an http rule has no selector`);
    out.push(...flatten(selector, rule, file));
  }
  return out;
}

/** Rules written as `option (google.api.http) = {...}` on the methods of a loaded root. */
export function rulesFromAnnotations(service: protobuf.Service): HttpBinding[] {
  const out: HttpBinding[] = [];
  const serviceName = service.fullName.replace(/^\./, '');
  for (const method of service.methodsArray) {
    const parsed = (method.parsedOptions ?? []) as Array<Record<string, unknown>>;
    for (const opt of parsed) {
      const rule = opt['(google.api.http)'] as RawRule | undefined;
      if (rule)
        out.push(
          ...flatten(
            `${serviceName}.${method.name}`,
            rule,
            `${serviceName}.${method.name} (google.api.http)`,
          ),
        );
    }
  }
  return out;
}
