import protobuf from 'protobufjs';
import { PlainValue, fullName } from '@svcboot/grpc-server/protocol';
import type { Part, PartHead } from './multipart.js';
import { applyQuery } from './params.js';
import { GatewayRejection } from './request.js';
import { resolveFieldPath, type GatewayRoute } from './route.js';

/**
 * How a `multipart/form-data` upload becomes the body of a rule (README, "Uploads"):
 * - a google.api.HttpBody body takes the one part's content as `data` and its Content-Type as
 *   `content_type`; a body that is a `bytes` field takes the one part's content;
 * - a message body takes each part as the field its name gives (`name`, `nested.name`,
 *   `labels[key]`, proto or JSON names): a `bytes` field gets the part's content as it is (each
 *   part once more for a repeated field), any other field the part's text, converted as a query
 *   parameter is (numbers, enums by name or number, well-known types from their text forms).
 * A part naming no field, or a message field, is refused (400) as soon as its headers arrive.
 */
export interface UploadTarget {
  /** Sees each part's head before its content is read; throws a 400 to refuse it. */
  check(head: PartHead): void;
  /** The parts as the JSON tree of the rule's body (raw bytes kept as Buffers). */
  build(parts: readonly Part[]): unknown;
}

function refused(message: string): GatewayRejection {
  return new GatewayRejection(3, message, 400);
}

/** The upload target of a rule with a body; a 400 when its body can take no upload (a scalar field). */
export function uploadTarget(route: GatewayRoute): UploadTarget {
  const hb = route.httpBodyRequest;
  if (hb) {
    let parts = 0;
    return {
      check() {
        if (++parts > 1)
          throw refused(
            `an upload to ${route.method.path} (a google.api.HttpBody body) takes one part, not several`,
          );
      },
      build(list) {
        const part = list[0];
        return new PlainValue({
          [hb.contentType]: part?.contentType ?? (part ? 'application/octet-stream' : ''),
          [hb.data]: part?.data ?? Buffer.alloc(0),
        });
      },
    };
  }
  const field = route.bodyField;
  if (field?.type === 'bytes' && !field.repeated && !field.map) {
    // The body is one bytes field: one part's content.
    let parts = 0;
    return {
      check() {
        if (++parts > 1)
          throw refused(
            `an upload to ${route.method.path} (body "${route.binding.body}", a bytes field) takes one part, not several`,
          );
      },
      build: (list) => list[0]?.data ?? Buffer.alloc(0),
    };
  }
  const type = field === undefined ? route.requestType : field.resolvedType;
  if (
    !(type instanceof protobuf.Type) ||
    field?.repeated ||
    field?.map ||
    fullName(type).startsWith('google.protobuf.')
  )
    throw refused(
      `${route.method.path}: a multipart/form-data upload needs a rule whose body is a message, a bytes field or a google.api.HttpBody; body "${route.binding.body}" is none`,
    );
  return new MessageUpload(type);
}

/** A part name without its map key: `labels[key]` → `labels`. */
function fieldPathOf(name: string): string {
  const open = name.indexOf('[');
  return open > 0 && name.endsWith(']') ? name.slice(0, open) : name;
}

class MessageUpload implements UploadTarget {
  /** The leaf field of each part name seen (checked once). */
  private readonly leaves = new Map<string, protobuf.Field[]>();

  constructor(private readonly type: protobuf.Type) {}

  check(head: PartHead): void {
    if (this.leaves.has(head.name)) return;
    const path = fieldPathOf(head.name);
    const { fields, error } = resolveFieldPath(this.type, path);
    if (error)
      throw refused(
        `multipart part "${head.name}" names no field of ${fullName(this.type)}: ${error}`,
      );
    const leaf = fields[fields.length - 1]!;
    const rt = leaf.resolvedType;
    if (rt instanceof protobuf.Type && !leaf.map && !fullName(rt).startsWith('google.protobuf.'))
      throw refused(
        `multipart part "${head.name}" names the message field ${leaf.name} of ${fullName(this.type)}: send its fields as parts ("${path}.<field>")`,
      );
    this.leaves.set(head.name, fields);
  }

  build(parts: readonly Part[]): unknown {
    const obj: Record<string, unknown> = {};
    const text = new Map<string, string[]>();
    const bytes: Part[] = [];
    for (const part of parts) {
      const fields = this.leaves.get(part.name)!;
      const leaf = fields[fields.length - 1]!;
      if (leaf.type === 'bytes' && !leaf.map) bytes.push(part);
      else {
        const values = text.get(part.name);
        const value = part.data.toString('utf8');
        if (values) values.push(value);
        else text.set(part.name, [value]);
      }
    }
    // Text parts as query parameters are read (the same conversions and errors).
    if (text.size > 0) applyQuery(this.type, obj, text, []);
    for (const part of bytes) {
      const fields = this.leaves.get(part.name)!;
      let at = obj;
      for (let i = 0; i < fields.length - 1; i++) {
        const name = fields[i]!.name;
        const child = at[name];
        at = (child !== null && typeof child === 'object' ? child : (at[name] = {})) as Record<
          string,
          unknown
        >;
      }
      const leaf = fields[fields.length - 1]!;
      if (leaf.repeated) {
        const list = at[leaf.name];
        if (Array.isArray(list)) list.push(part.data);
        else at[leaf.name] = [part.data];
      } else if (at[leaf.name] !== undefined)
        throw refused(`multipart part "${part.name}" is sent twice for a singular bytes field`);
      else at[leaf.name] = part.data;
    }
    return obj;
  }
}
