import type protobuf from 'protobufjs';
import type { OpenApiOptions } from './options.js';
// Not an ES import of node:fs (its facade loads fs streams and fs/promises): see api/protos.ts.
const { readFileSync } = process.getBuiltinModule('node:fs');

const PARAGRAPH = '\n\n';

/** Drops `(-- ... --)` internal comments (AIP-192) as protoc-gen-openapiv2 does. */
export function removeInternalComments(comment: string): string {
  const kept: string[] = [];
  let rest = comment;
  while (rest.length > 0) {
    const open = rest.indexOf('(--');
    if (open < 0) {
      kept.push(rest);
      break;
    }
    let before = rest.slice(0, open).replace(/[ \t]+$/, '');
    if (before.endsWith('\r\n')) before = before.slice(0, -2);
    else if (before.endsWith('\n')) before = before.slice(0, -1);
    if (before !== '') kept.push(before);
    rest = rest.slice(open + 3);
    const close = rest.indexOf('--)');
    if (close < 0) break;
    rest = rest.slice(close + 3);
  }
  return kept.join('');
}

/** The proto comment of an element (protobufjs keeps one: the leading one, else the trailing one). */
export function protoComment(obj: { comment?: string | null } | null | undefined): string {
  const c = obj?.comment;
  if (!c) return '';
  return removeInternalComments(c.trim().replaceAll('\n ', '\n'));
}

/** The comment of each value of an enum: `- NAME: comment` lines, as protoc-gen-openapiv2 lists them. */
export function enumValueComments(
  e: protobuf.Enum,
  opts: OpenApiOptions,
  visible: (name: string) => boolean,
): string {
  const lines: string[] = [];
  for (const [name, number] of Object.entries(e.values)) {
    if (opts.omitEnumDefaultValue && number === 0) continue;
    if (!visible(name)) continue;
    const c = e.comments[name];
    const text = c ? removeInternalComments(c.trim().replaceAll('\n ', '\n')) : '';
    if (text) lines.push(`${opts.enumsAsInts ? String(number) : name}: ${text}`);
  }
  return lines.length > 0 ? `- ${lines.join('\n - ')}` : '';
}

interface Described {
  title?: string;
  summary?: string;
  description?: string;
  readOnly?: boolean;
}

function prepare(comment: string, opts: OpenApiOptions): string {
  if (!comment || opts.ignoreComments) return '';
  return opts.removeInternalComments ? removeInternalComments(comment) : comment;
}

/**
 * A comment onto a schema (no summary): the first paragraph becomes the title unless it ends
 * with a period, the rest the description; otherwise the whole comment is the description.
 * Set values are kept. "Output only." marks the schema read-only.
 */
export function commentToSchema(target: Described, comment: string, opts: OpenApiOptions): void {
  const c = prepare(comment, opts);
  if (!c) return;
  if (c.includes('Output only.')) target.readOnly = true;
  const paragraphs = c.split(PARAGRAPH);
  const summary = paragraphs[0]!.trim();
  const description = paragraphs.slice(1).join(PARAGRAPH).trim();
  if (summary.length > 0 && !summary.endsWith('.')) {
    if (!target.title) target.title = summary;
    if (description && !target.description) target.description = description;
    return;
  }
  if (!target.description) target.description = paragraphs.join(PARAGRAPH);
}

/** A comment onto an operation: first paragraph summary, the rest description (set values kept). */
export function commentToOperation(target: Described, comment: string, opts: OpenApiOptions): void {
  const c = prepare(comment, opts);
  if (!c) return;
  const paragraphs = c.split(PARAGRAPH);
  const summary = paragraphs[0]!.trim();
  const description = paragraphs.slice(1).join(PARAGRAPH).trim();
  if (!target.summary) target.summary = summary;
  if (description && !target.description) target.description = description;
}

/** A comment onto an object with only a description (tags). */
export function commentToDescription(
  target: Described,
  comment: string,
  opts: OpenApiOptions,
): void {
  const c = prepare(comment, opts);
  if (c && !target.description) target.description = c;
}

/** title and description joined, as parameters (which have no title) carry them. */
export function mergeDescription(s: { title?: unknown; description?: unknown }): string {
  const d = typeof s.description === 'string' ? s.description : '';
  const t = typeof s.title === 'string' ? s.title : '';
  return t ? `${t}${PARAGRAPH}${d}`.trim() : d;
}

/**
 * The leading `//` comment of a .proto file's `package` statement (protobufjs keeps none for
 * packages), read from the file; '' when the file cannot be read.
 */
export function packageComment(file: string | null | undefined): string {
  if (!file) return '';
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^\s*package\s+[\w.]+\s*;/.test(l));
  if (at < 0) return '';
  const comment: string[] = [];
  for (let i = at - 1; i >= 0; i--) {
    const m = /^\s*\/\/(.*)$/.exec(lines[i]!);
    if (!m) break;
    comment.unshift(m[1]!);
  }
  return removeInternalComments(comment.join('\n').trim().replaceAll('\n ', '\n'));
}

/** A package comment onto `info`: the first paragraph is the title unless it ends with a period. */
export function commentToInfo(info: Described, comment: string, opts: OpenApiOptions): void {
  const c = prepare(comment, opts);
  if (!c) return;
  const paragraphs = c.split(PARAGRAPH);
  const summary = paragraphs[0]!.trim();
  const description = paragraphs.slice(1).join(PARAGRAPH).trim();
  if (summary.length > 0 && !summary.endsWith('.')) {
    info.title = summary;
    if (description) info.description = description;
    return;
  }
  info.description = paragraphs.join(PARAGRAPH);
}
