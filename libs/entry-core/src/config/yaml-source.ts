import { LineCounter, parseDocument, isMap, isScalar, Scalar, type Document } from 'yaml';
import type { ConfigIssue } from '../errors.js';
import type { DocPath } from './config-path.js';

/** A parsed boot.yaml that can still tell where a value came from. */
export class YamlSource {
  private constructor(
    readonly file: string,
    private readonly doc: Document | undefined,
    private readonly lines: LineCounter,
    readonly value: unknown,
  ) {}

  static parse(file: string, text: string): { source?: YamlSource; issues: ConfigIssue[] } {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length > 0) {
      return {
        issues: doc.errors.map((e) => ({
          path: file,
          message: `invalid YAML: ${e.message.split('\n')[0]}`,
          line: lines.linePos(e.pos[0]).line,
          column: lines.linePos(e.pos[0]).col,
        })),
      };
    }
    return {
      source: new YamlSource(file, doc, lines, doc.toJS({ maxAliasCount: 100 }) ?? {}),
      issues: [],
    };
  }

  static fromObject(file: string, value: unknown): YamlSource {
    return new YamlSource(file, undefined, new LineCounter(), value);
  }

  /** Line and column of the node at `path`, or of its nearest ancestor that exists in the file. */
  position(path: DocPath): { line?: number; column?: number } {
    if (!this.doc) return {};
    for (let n = path.length; n >= 0; n--) {
      const node = this.doc.getIn(path.slice(0, n), true) as
        | { range?: [number, number, number] }
        | undefined;
      if (node && typeof node === 'object' && node.range) {
        const pos = this.lines.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return {};
  }

  /** Line and column of the key that ends `path` (for "unknown key" problems), else of the value. */
  keyPosition(path: DocPath): { line?: number; column?: number } {
    if (this.doc && path.length > 0) {
      const parent =
        path.length === 1 ? this.doc.contents : this.doc.getIn(path.slice(0, -1), true);
      const last = path[path.length - 1];
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
        const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
        if (range) {
          const pos = this.lines.linePos(range[0]);
          return { line: pos.line, column: pos.col };
        }
      }
    }
    return this.position(path);
  }

  /** True when the scalar at `path` was written without quotes (so `${PORT}` may become a number). */
  isPlainScalar(path: DocPath): boolean {
    if (!this.doc) return true;
    const node = this.doc.getIn(path, true);
    return isScalar(node) && (node.type === Scalar.PLAIN || node.type === undefined);
  }
}
