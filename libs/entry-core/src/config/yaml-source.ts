import type { Document, LineCounter } from 'yaml';
import type { ConfigIssue } from '../errors.js';
import type { DocPath } from './config-path.js';
import { yamlLibrary } from './yaml-library.js';
import { pathKey, readYamlSubset } from './yaml-subset.js';

/** The library's document of a text and its line counter, made when a position is first asked. */
interface Located {
  doc: Document;
  lines: LineCounter;
}

/** The text parsed by the `yaml` library, its nodes' offsets countable as lines. */
function parseWithLibrary(text: string): Located {
  const yaml = yamlLibrary();
  const lines = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
  });
  return { doc, lines };
}

/**
 * A parsed boot.yaml that can still tell where a value came from. The common subset of YAML is
 * read without the `yaml` library (config/yaml-subset.ts); the library parses the rest, and
 * parses the text again when a problem needs a line and column (an error path, not a start).
 */
export class YamlSource {
  private located: Located | undefined;

  private constructor(
    readonly file: string,
    /** The file's text (undefined: made from an object, no positions). */
    private readonly text: string | undefined,
    /** Paths of the quoted scalars holding `${` (pathKey), when the subset reader read it. */
    private readonly quotedVars: ReadonlySet<string> | undefined,
    readonly value: unknown,
    located?: Located,
  ) {
    this.located = located;
  }

  static parse(file: string, text: string): { source?: YamlSource; issues: ConfigIssue[] } {
    const read = readYamlSubset(text);
    if (read !== undefined && read.value !== null && typeof read.value === 'object')
      return { source: new YamlSource(file, text, read.quotedVars, read.value), issues: [] };
    const located = parseWithLibrary(text);
    const { doc, lines } = located;
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
      source: new YamlSource(
        file,
        text,
        undefined,
        doc.toJS({ maxAliasCount: 100 }) ?? {},
        located,
      ),
      issues: [],
    };
  }

  static fromObject(file: string, value: unknown): YamlSource {
    return new YamlSource(file, undefined, undefined, value);
  }

  /** The library's document, parsed now if the subset reader read the text. */
  private locate(): Located | undefined {
    if (this.located === undefined && this.text !== undefined)
      this.located = parseWithLibrary(this.text);
    return this.located;
  }

  /** Line and column of the node at `path`, or of its nearest ancestor that exists in the file. */
  position(path: DocPath): { line?: number; column?: number } {
    const located = this.locate();
    if (!located) return {};
    for (let n = path.length; n >= 0; n--) {
      const node = located.doc.getIn(path.slice(0, n), true) as
        | { range?: [number, number, number] }
        | undefined;
      if (node && typeof node === 'object' && node.range) {
        const pos = located.lines.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return {};
  }

  /** Line and column of the key that ends `path` (for "unknown key" problems), else of the value. */
  keyPosition(path: DocPath): { line?: number; column?: number } {
    const located = this.locate();
    if (located && path.length > 0) {
      const { isMap, isScalar } = yamlLibrary();
      const parent =
        path.length === 1 ? located.doc.contents : located.doc.getIn(path.slice(0, -1), true);
      const last = path[path.length - 1];
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
        const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
        if (range) {
          const pos = located.lines.linePos(range[0]);
          return { line: pos.line, column: pos.col };
        }
      }
    }
    return this.position(path);
  }

  /** True when the scalar at `path` was written without quotes (so `${PORT}` may become a number). */
  isPlainScalar(path: DocPath): boolean {
    if (this.text === undefined) return true;
    // Read by the subset reader: every scalar holding `${` that was quoted is listed.
    if (this.quotedVars !== undefined) return !this.quotedVars.has(pathKey(path));
    const { isScalar, Scalar } = yamlLibrary();
    const node = this.located!.doc.getIn(path, true);
    return isScalar(node) && (node.type === Scalar.PLAIN || node.type === undefined);
  }
}
