import protobuf from 'protobufjs';
import { fieldByAnyName, fullName } from '@svcboot/grpc-server/protocol';
import { ParamError } from './params.js';

/**
 * runtime/fieldmask.go FieldMaskFromRequestBody: the paths (proto names) of every complete field
 * a PATCH body sets, nested messages walked breadth first; repeated and map fields and empty
 * objects end a path; Struct and Value are walked by their JSON keys; an Any needs `@type`.
 * Sorted, as grpc-gateway sorts them.
 */
export function fieldMaskFromBody(type: protobuf.Type, body: unknown): string[] {
  const paths: string[] = [];
  const queue: Array<{ path: string; node: unknown; type: protobuf.Type | undefined }> = [
    { path: '', node: body, type },
  ];
  while (queue.length > 0) {
    const item = queue.shift()!;
    const node = item.node;
    const isObject = node !== null && typeof node === 'object' && !Array.isArray(node);
    if (isObject && Object.keys(node).length > 0) {
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
        if (!item.type) throw new ParamError('JSON structure did not match request type');
        const fd = fieldByAnyName(item.type, k);
        if (!fd) throw new ParamError(`could not find field "${k}" in "${fullName(item.type)}"`);
        const rt = fd.resolvedType instanceof protobuf.Type ? fd.resolvedType : undefined;
        const path = item.path === '' ? fd.name : `${item.path}.${fd.name}`;
        const rtName = rt ? fullName(rt) : '';
        if (rtName === 'google.protobuf.Struct' || rtName === 'google.protobuf.Value') {
          for (const p of blindPaths(fd.name, v))
            queue.push({
              path: item.path === '' ? p : `${item.path}.${p}`,
              node: undefined,
              type: undefined,
            });
          continue;
        }
        if (rtName === 'google.protobuf.Any' && !fd.repeated) {
          if (v !== null && typeof v === 'object' && '@type' in v) {
            queue.push({ path: k, node: undefined, type: undefined });
            continue;
          }
          throw new ParamError(
            `could not find field @type in "${k}" in message "${fullName(item.type)}"`,
          );
        }
        if (fd.repeated || fd.map) paths.push(path);
        else queue.push({ path, node: v, type: rt });
      }
    } else if ((isObject && Object.keys(node).length === 0) || item.path.length > 0) {
      paths.push(item.path);
    }
  }
  return paths.sort();
}

/** buildPathsBlindly: the JSON keys of a Struct/Value body, nested objects walked. */
function blindPaths(name: string, value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [name];
  const out: string[] = [];
  const queue: Array<{ path: string; node: Record<string, unknown> }> = [
    { path: name, node: value as Record<string, unknown> },
  ];
  while (queue.length > 0) {
    const cur = queue.shift()!;
    for (const [k, v] of Object.entries(cur.node)) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v))
        queue.push({ path: `${cur.path}.${k}`, node: v as Record<string, unknown> });
      else out.push(`${cur.path}.${k}`);
    }
  }
  return out;
}
