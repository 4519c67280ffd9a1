/**
 * A .proto source from a compiled file descriptor: what `svc pb vendor` writes for a file that
 * comes with an npm package only as generated code (protovalidate's buf/validate/validate.proto,
 * embedded in @bufbuild/protovalidate). It compiles back to the same descriptor (proto2 and
 * proto3 files: messages, oneofs, enums, extensions, reserved and extension ranges, standard
 * options and the file's own custom options); comments are not in a descriptor, so none are
 * written.
 */
import {
  create,
  type DescExtension,
  type DescFile,
  type DescMessage,
  getExtension,
  hasExtension,
  isFieldSet,
  type Message,
} from '@bufbuild/protobuf';
import { toText } from '@bufbuild/protobuf/txtpb';
import {
  type DescriptorProto,
  type EnumDescriptorProto,
  EnumOptionsSchema,
  EnumValueOptionsSchema,
  type FieldDescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  FieldOptionsSchema,
  FileOptionsSchema,
  MessageOptionsSchema,
  OneofOptionsSchema,
} from '@bufbuild/protobuf/wkt';

/** The highest field number plus one: `to max` in a range. */
const MAX_FIELD_END = 536_870_912;

const SCALAR_NAMES: Partial<Record<FieldDescriptorProto_Type, string>> = {
  [FieldDescriptorProto_Type.DOUBLE]: 'double',
  [FieldDescriptorProto_Type.FLOAT]: 'float',
  [FieldDescriptorProto_Type.INT64]: 'int64',
  [FieldDescriptorProto_Type.UINT64]: 'uint64',
  [FieldDescriptorProto_Type.INT32]: 'int32',
  [FieldDescriptorProto_Type.FIXED64]: 'fixed64',
  [FieldDescriptorProto_Type.FIXED32]: 'fixed32',
  [FieldDescriptorProto_Type.BOOL]: 'bool',
  [FieldDescriptorProto_Type.STRING]: 'string',
  [FieldDescriptorProto_Type.BYTES]: 'bytes',
  [FieldDescriptorProto_Type.UINT32]: 'uint32',
  [FieldDescriptorProto_Type.SFIXED32]: 'sfixed32',
  [FieldDescriptorProto_Type.SFIXED64]: 'sfixed64',
  [FieldDescriptorProto_Type.SINT32]: 'sint32',
  [FieldDescriptorProto_Type.SINT64]: 'sint64',
};

/** A string literal protoc reads back byte for byte: non-ASCII as octal UTF-8 bytes. */
export function protoString(s: string): string {
  let out = '"';
  for (const byte of new TextEncoder().encode(s)) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x0a) out += '\\n';
    else if (byte === 0x0d) out += '\\r';
    else if (byte === 0x09) out += '\\t';
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

type OptionsSchema =
  | typeof FileOptionsSchema
  | typeof MessageOptionsSchema
  | typeof FieldOptionsSchema
  | typeof OneofOptionsSchema
  | typeof EnumOptionsSchema
  | typeof EnumValueOptionsSchema;

/**
 * The options set on a descriptor, each as `name = value`: the standard ones by their field
 * names, custom ones (`(pkg.ext) = {...}`) for the extensions `file` declares.
 */
function optionList(
  schema: OptionsSchema,
  options: Message | undefined,
  extensions: readonly DescExtension[],
): string[] {
  if (!options) return [];
  const out: string[] = [];
  for (const field of schema.fields) {
    if (field.name === 'uninterpreted_option' || field.name === 'features') continue;
    if (!isFieldSet(options as never, field)) continue;
    // One field alone in text format is `name: value`; an option says `name = value`.
    const single = create(schema as DescMessage) as unknown as Record<string, unknown>;
    single[field.localName] = (options as unknown as Record<string, unknown>)[field.localName];
    const text = toText(schema as DescMessage, single as never).trim();
    const colon = text.indexOf(': ');
    if (colon < 0 || text.includes('\n'))
      throw new Error(`cannot write option ${field.name} of ${schema.typeName} as .proto`);
    out.push(`${text.slice(0, colon)} = ${text.slice(colon + 2)}`);
  }
  for (const ext of extensions) {
    if (ext.extendee.typeName !== schema.typeName) continue;
    if (!hasExtension(options as never, ext)) continue;
    const name = `(${ext.typeName})`;
    const value = getExtension(options as never, ext) as unknown;
    if (ext.fieldKind !== 'message')
      throw new Error(`cannot write the option ${name}: only message-typed ones are supported`);
    const body = toText(ext.message, value as never).trimEnd();
    out.push(
      body === ''
        ? `${name} = {}`
        : `${name} = {\n${body
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n')}\n}`,
    );
  }
  return out;
}

/** `[a = 1, b = 2]` after a field or value, or nothing. */
function bracketed(options: readonly string[], indent: string): string {
  if (options.length === 0) return '';
  if (options.every((o) => !o.includes('\n'))) return ` [${options.join(', ')}]`;
  const inner = `${indent}  `;
  return ` [\n${options.map((o) => inner + o.split('\n').join(`\n${inner}`)).join(',\n')}\n${indent}]`;
}

function typeOf(f: FieldDescriptorProto): string {
  const scalar = SCALAR_NAMES[f.type];
  if (scalar) return scalar;
  if (f.type === FieldDescriptorProto_Type.GROUP)
    throw new Error(`field ${f.name}: groups are not supported`);
  return f.typeName; // fully qualified, with its leading dot
}

function defaultOf(f: FieldDescriptorProto): string | undefined {
  // An empty string default is the same as none (proto2's implicit default).
  if (f.defaultValue === undefined || f.defaultValue === '') return undefined;
  if (f.type === FieldDescriptorProto_Type.STRING)
    return `default = ${protoString(f.defaultValue)}`;
  if (f.type === FieldDescriptorProto_Type.BYTES)
    throw new Error(`field ${f.name}: bytes defaults are not supported`);
  return `default = ${f.defaultValue}`;
}

const camel = (name: string): string =>
  name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function rangeText(start: number, endExclusive: number): string {
  if (endExclusive === MAX_FIELD_END) return `${start} to max`;
  return endExclusive - 1 === start ? `${start}` : `${start} to ${endExclusive - 1}`;
}

class Writer {
  readonly lines: string[] = [];
  constructor(
    private readonly syntax: 'proto2' | 'proto3',
    private readonly extensions: readonly DescExtension[],
  ) {}

  field(f: FieldDescriptorProto, indent: string, inOneof: boolean): void {
    let label = '';
    if (!inOneof) {
      if (f.label === FieldDescriptorProto_Label.REPEATED) label = 'repeated ';
      else if (f.label === FieldDescriptorProto_Label.REQUIRED) label = 'required ';
      else if (this.syntax === 'proto2' || f.proto3Optional) label = 'optional ';
    }
    const options = optionList(FieldOptionsSchema, f.options, this.extensions);
    const dflt = defaultOf(f);
    if (dflt) options.unshift(dflt);
    if (f.jsonName && f.jsonName !== camel(f.name))
      options.unshift(`json_name = ${protoString(f.jsonName)}`);
    this.lines.push(
      `${indent}${label}${typeOf(f)} ${f.name} = ${f.number}${bracketed(options, indent)};`,
    );
  }

  message(m: DescriptorProto, indent: string): void {
    if (m.options?.mapEntry) return; // written as map<k, v> by its field; not used by the files we write
    this.lines.push(`${indent}message ${m.name} {`);
    const inner = `${indent}  `;
    for (const o of optionList(MessageOptionsSchema, m.options, this.extensions))
      this.lines.push(`${inner}option ${o.split('\n').join(`\n${inner}`)};`);
    const writtenOneofs = new Set<number>();
    for (const f of m.field) {
      // proto2 fields read as 0 when unset: presence says whether it is in a oneof.
      const index = isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex)
        ? f.oneofIndex
        : undefined;
      if (index === undefined || f.proto3Optional) {
        this.field(f, inner, false);
        continue;
      }
      if (writtenOneofs.has(index)) continue;
      writtenOneofs.add(index);
      const decl = m.oneofDecl[index]!;
      this.lines.push(`${inner}oneof ${decl.name} {`);
      for (const o of optionList(OneofOptionsSchema, decl.options, this.extensions))
        this.lines.push(`${inner}  option ${o.split('\n').join(`\n${inner}  `)};`);
      for (const member of m.field)
        if (
          isFieldSet(member, FieldDescriptorProtoSchema.field.oneofIndex) &&
          member.oneofIndex === index &&
          !member.proto3Optional
        )
          this.field(member, `${inner}  `, true);
      this.lines.push(`${inner}}`);
    }
    for (const nested of m.nestedType) this.message(nested, inner);
    for (const e of m.enumType) this.enum(e, inner);
    if (m.extension.length)
      throw new Error(`message ${m.name}: nested extensions are not supported`);
    for (const r of m.extensionRange)
      this.lines.push(`${inner}extensions ${rangeText(r.start, r.end)};`);
    for (const r of m.reservedRange)
      this.lines.push(`${inner}reserved ${rangeText(r.start, r.end)};`);
    for (const n of m.reservedName) this.lines.push(`${inner}reserved ${protoString(n)};`);
    this.lines.push(`${indent}}`);
  }

  enum(e: EnumDescriptorProto, indent: string): void {
    const inner = `${indent}  `;
    this.lines.push(`${indent}enum ${e.name} {`);
    for (const o of optionList(EnumOptionsSchema, e.options, this.extensions))
      this.lines.push(`${inner}option ${o};`);
    for (const v of e.value) {
      const options = optionList(EnumValueOptionsSchema, v.options, this.extensions);
      this.lines.push(`${inner}${v.name} = ${v.number}${bracketed(options, inner)};`);
    }
    // An enum's reserved range includes its end.
    for (const r of e.reservedRange)
      this.lines.push(
        `${inner}reserved ${r.start === r.end ? r.start : `${r.start} to ${r.end}`};`,
      );
    for (const n of e.reservedName) this.lines.push(`${inner}reserved ${protoString(n)};`);
    this.lines.push(`${indent}}`);
  }
}

/** The .proto source of `file`, below `header` (comment lines, `// ` added). */
export function protoSource(file: DescFile, header: readonly string[] = []): string {
  const p = file.proto;
  const syntax = p.syntax === '' || p.syntax === 'proto2' ? 'proto2' : p.syntax;
  if (syntax !== 'proto2' && syntax !== 'proto3')
    throw new Error(`${p.name}: syntax "${p.syntax}" is not supported (proto2 and proto3 are)`);
  if (p.service.length) throw new Error(`${p.name}: services are not supported`);
  const w = new Writer(syntax, file.extensions);
  const out = w.lines;
  for (const h of header) out.push(h === '' ? '//' : `// ${h}`);
  if (header.length) out.push('');
  out.push(`syntax = "${syntax}";`, '');
  if (p.package) out.push(`package ${p.package};`, '');
  for (const [i, dep] of p.dependency.entries()) {
    const kind = p.publicDependency.includes(i)
      ? 'public '
      : p.weakDependency.includes(i)
        ? 'weak '
        : '';
    out.push(`import ${kind}${protoString(dep)};`);
  }
  if (p.dependency.length) out.push('');
  const fileOptions = optionList(FileOptionsSchema, p.options, file.extensions);
  for (const o of fileOptions) out.push(`option ${o};`);
  if (fileOptions.length) out.push('');
  // Extensions first: the options below may use them (protoc resolves them anywhere in the file).
  const byExtendee = new Map<string, FieldDescriptorProto[]>();
  for (const x of p.extension) {
    const list = byExtendee.get(x.extendee) ?? [];
    list.push(x);
    byExtendee.set(x.extendee, list);
  }
  for (const [extendee, fields] of byExtendee) {
    out.push(`extend ${extendee} {`);
    for (const f of fields) w.field(f, '  ', false);
    out.push('}', '');
  }
  for (const m of p.messageType) {
    w.message(m, '');
    out.push('');
  }
  for (const e of p.enumType) {
    w.enum(e, '');
    out.push('');
  }
  while (out.at(-1) === '') out.pop();
  return `${out.join('\n')}\n`;
}
