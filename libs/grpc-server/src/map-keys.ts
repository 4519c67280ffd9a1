import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { rootFromDefinitions } from './descriptors.js';

/**
 * Map keys as protobufjs 7 keeps them, and as protojson and a handler expect them.
 *
 * - protobufjs's decoder stores a 64-bit key (int64, uint64, sint64, fixed64, sfixed64) in its
 *   8-character hash form (the key's little-endian bytes as characters), not as a number: what
 *   protojson writes as `"-1"` arrives as eight characters, some of them NUL.
 * - its encoder writes a bool key with `writer.bool(key)` on the object's key, a string: `"false"`
 *   is a non-empty string, so it is written as true. The empty string is written as false.
 *
 * The gateway's JSON mapping, Connect JSON and the handlers of @grpc/proto-loader definitions go
 * through these functions, so that keys are decimal strings and `true` / `false` everywhere.
 */

const LONG_KEYS = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED_LONG_KEYS = new Set(['uint64', 'fixed64']);

/** Whether a map key of `keyType` is kept in protobufjs's hash form once decoded. */
export function isLongKey(keyType: string): boolean {
  return LONG_KEYS.has(keyType);
}

/**
 * A decoded map key as protojson writes it: a 64-bit key's hash form as its decimal text (an
 * already decimal key, from an encoder without `long`, stays as it is); other keys unchanged.
 */
export function decodedMapKey(keyType: string, key: string): string {
  if (!LONG_KEYS.has(keyType) || key.length !== 8 || !protobuf.util.Long) return key;
  return protobuf.util.LongBits.fromHash(key).toLong(UNSIGNED_LONG_KEYS.has(keyType)).toString();
}

/** A key in protojson's form (`"false"`) as the key protobufjs's encoder writes as meant. */
export function encodableMapKey(keyType: string, key: string): string {
  return keyType === 'bool' && key === 'false' ? '' : key;
}

type Obj = Record<string, unknown>;

/** `foo_bar` → `fooBar`: proto-loader's field names without `keepCase`. */
function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function fieldKey(obj: Obj, field: protobuf.Field): string | undefined {
  if (obj[field.name] !== undefined) return field.name;
  const c = camel(field.name);
  return obj[c] !== undefined ? c : undefined;
}

interface MapShape {
  keyType: string;
  /** The value's message type, when it is one. */
  value: protobuf.Type | undefined;
}

/**
 * A map field's key type and value type: a `map<…>` field, or the repeated map-entry message field
 * it is in a root rebuilt from descriptors (protobufjs's fromDescriptor keeps the `…Entry` type).
 */
function mapShape(f: protobuf.Field): MapShape | undefined {
  if (f.map) {
    const value = f.resolvedType instanceof protobuf.Type ? f.resolvedType : undefined;
    return { keyType: (f as unknown as protobuf.MapField).keyType, value };
  }
  const rt = f.resolvedType;
  if (!f.repeated || !(rt instanceof protobuf.Type) || rt.options?.['map_entry'] !== true)
    return undefined;
  const key = rt.fields['key'];
  const value = rt.fields['value'];
  if (!key) return undefined;
  return {
    keyType: key.type,
    value: value?.resolvedType instanceof protobuf.Type ? value.resolvedType : undefined,
  };
}

/** The message type a field holds (a map's value type), if any. */
function childType(f: protobuf.Field): protobuf.Type | undefined {
  const shape = mapShape(f);
  if (shape) return shape.value;
  return f.resolvedType instanceof protobuf.Type ? f.resolvedType : undefined;
}

/**
 * The message types under `type` (itself included) that hold, at any depth, a map whose keys
 * `affected` says must be rewritten; empty when none does.
 */
function affectedTypes(
  type: protobuf.Type,
  affected: (keyType: string) => boolean,
): Set<protobuf.Type> {
  const all = new Set<protobuf.Type>();
  const visit = (t: protobuf.Type): void => {
    if (all.has(t)) return;
    all.add(t);
    for (const f of t.fieldsArray)
      if (f.resolvedType instanceof protobuf.Type) visit(f.resolvedType);
  };
  visit(type);
  const out = new Set<protobuf.Type>();
  for (const t of all)
    if (
      t.fieldsArray.some((f) => {
        const shape = mapShape(f);
        return shape !== undefined && affected(shape.keyType);
      })
    )
      out.add(t);
  for (let changed = true; changed; ) {
    changed = false;
    for (const t of all) {
      if (out.has(t)) continue;
      if (
        t.fieldsArray.some(
          (f) => f.resolvedType instanceof protobuf.Type && out.has(f.resolvedType),
        )
      ) {
        out.add(t);
        changed = true;
      }
    }
  }
  return out;
}

/**
 * A function returning a copy of a message object (proto or camelCase field names) with the keys
 * of every map under it rewritten by `rewrite`, or undefined when no map of `type` needs it. Only
 * the objects on the way to such a map are copied.
 */
export function mapKeyRewriter(
  type: protobuf.Type,
  affected: (keyType: string) => boolean,
  rewrite: (keyType: string, key: string) => string,
): ((msg: unknown) => unknown) | undefined {
  const types = affectedTypes(type, affected);
  if (types.size === 0) return undefined;
  const walk = (t: protobuf.Type, value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || !types.has(t)) return value;
    const obj = value as Obj;
    let out: Obj | undefined;
    for (const f of t.fieldsArray) {
      const child = childType(f);
      const keyType = mapShape(f)?.keyType;
      if (!(keyType !== undefined && affected(keyType)) && !(child && types.has(child))) continue;
      const k = fieldKey(obj, f);
      if (k === undefined) continue;
      const v = obj[k];
      let next: unknown = v;
      if (keyType !== undefined) {
        if (v && typeof v === 'object') {
          const m: Obj = {};
          for (const [key, item] of Object.entries(v as Obj))
            m[affected(keyType) ? rewrite(keyType, key) : key] = child ? walk(child, item) : item;
          next = m;
        }
      } else if (Array.isArray(v)) next = v.map((item) => walk(child!, item));
      else next = walk(child!, v);
      if (next !== v) {
        out ??= { ...obj };
        out[k] = next;
      }
    }
    return out ?? obj;
  };
  return (msg) => walk(type, msg);
}

/** What proto-loader gives of a message type: its DescriptorProto as a plain object. */
interface LoaderType {
  type?: { field?: ReadonlyArray<{ type?: unknown }> };
}

/**
 * Whether a method's request and response, as proto-loader describes them, have no field of a
 * message type (a map is one: a repeated field of its entry message). Unknown shapes are not flat.
 */
function isFlat(def: MethodDefinition<unknown, unknown>): boolean {
  const flat = (t: LoaderType | undefined): boolean =>
    Array.isArray(t?.type?.field) && t.type.field.every((f) => f.type !== 'TYPE_MESSAGE');
  const d = def as unknown as { requestType?: LoaderType; responseType?: LoaderType };
  return flat(d.requestType) && flat(d.responseType);
}

/**
 * Roots rebuilt from proto-loader's descriptors, by the list of files it gives every message type
 * of one `loadSync` (one list for all its services): built once for them all.
 */
const roots = new WeakMap<object, protobuf.Root | undefined>();

function rootOf(definition: ServiceDefinition): protobuf.Root | undefined {
  const files = (
    Object.values(definition)[0] as
      | { requestType?: { fileDescriptorProtos?: Buffer[] } }
      | undefined
  )?.requestType?.fileDescriptorProtos;
  if (!files) return undefined;
  if (roots.has(files)) return roots.get(files);
  let root: protobuf.Root | undefined;
  try {
    root = rootFromDefinitions([definition]);
  } catch {
    root = undefined;
  }
  roots.set(files, root);
  return root;
}

/**
 * A @grpc/proto-loader service definition whose handlers see protojson's map keys: 64-bit keys
 * of a request as decimal strings (not protobufjs's hash form), and whose response keys `"false"`
 * of a bool map are written as false. Definitions without descriptors, or without such maps, are
 * returned as they are.
 */
export function withProtojsonMapKeys(definition: ServiceDefinition): ServiceDefinition {
  // Every message flat (no message-typed field, so no map): nothing to rewrite, and no root to
  // rebuild from the descriptors (~2 ms of a start).
  if (Object.values(definition).every(isFlat)) return definition;
  const root = rootOf(definition);
  if (!root) return definition;
  let changed = false;
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [key, def] of Object.entries(definition) as Array<
    [string, MethodDefinition<unknown, unknown>]
  >) {
    const [service, method] = def.path.slice(1).split('/') as [string, string];
    let rpc: protobuf.Method | undefined;
    try {
      rpc = root.lookupService(service).methods[method];
    } catch {
      rpc = undefined;
    }
    const request = rpc?.resolvedRequestType ?? undefined;
    const response = rpc?.resolvedResponseType ?? undefined;
    const fromHash = request && mapKeyRewriter(request, isLongKey, decodedMapKey);
    const boolKeys = response && mapKeyRewriter(response, (t) => t === 'bool', encodableMapKey);
    if (!fromHash && !boolKeys) {
      out[key] = def;
      continue;
    }
    changed = true;
    const { requestDeserialize, responseSerialize } = def;
    out[key] = {
      ...def,
      requestDeserialize: fromHash
        ? (b: Buffer) => fromHash(requestDeserialize(b))
        : requestDeserialize,
      responseSerialize: boolKeys
        ? (v: unknown) => responseSerialize(boolKeys(v))
        : responseSerialize,
    };
  }
  return changed ? (out as ServiceDefinition) : definition;
}
