/**
 * What `npm run bench` writes into BENCHMARKS.md, and only that: each generated block (the header,
 * one section per benchmark) sits between two HTML comments,
 *
 *   <!-- bench:begin grpc (npm run bench replaces what lies up to bench:end grpc) -->
 *   ## grpc
 *   …
 *   <!-- bench:end grpc -->
 *
 * and a run replaces what lies between the markers of the blocks it wrote, nothing else: text
 * written by hand (between blocks, after one, under a generated section's heading) stays where it
 * is. A block the file does not have yet is added: the header at the top, a benchmark's section
 * at the end. Markers that do not pair up are an error naming the line, before anything is
 * written.
 */

/** The name of the header's block (the title, the machine, how to read the file). */
export const HEADER = 'header';

export interface GeneratedBlock {
  /** `header` or a benchmark's name. */
  name: string;
  /** The block's markdown, without the markers. */
  text: string;
}

/** BENCHMARKS.md's markers are missing a partner, repeated or malformed. */
export class BenchmarksMdError extends Error {}

export const beginMarker = (name: string): string =>
  `<!-- bench:begin ${name} (npm run bench replaces what lies up to bench:end ${name}) -->`;
export const endMarker = (name: string): string => `<!-- bench:end ${name} -->`;

const MARKER = /^<!-- bench:(begin|end) ([A-Za-z0-9_.-]+)(?: \([^)]*\))? -->$/;
/** Anything that looks like one of the markers, to tell a mistyped one from prose. */
const MARKER_LIKE = /<!--\s*bench:\s*(begin|end)\b/;

/** Where one block's markers are: the lines (0-based) of its begin and end markers. */
export interface BlockPlace {
  begin: number;
  end: number;
}

/**
 * The generated blocks of `doc` by name. Throws a BenchmarksMdError (1-based line numbers, for
 * people) when a marker is malformed, a begin has no end (or another begin comes first), an end
 * has no begin, or a name has two blocks.
 */
export function generatedBlocks(doc: string): Map<string, BlockPlace> {
  const lines = doc.split('\n');
  const blocks = new Map<string, BlockPlace>();
  let open: { name: string; line: number } | undefined;
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    const m = MARKER.exec(line);
    if (!m) {
      if (MARKER_LIKE.test(line))
        throw new BenchmarksMdError(
          `BENCHMARKS.md line ${i + 1}: not a bench marker as npm run bench writes them ` +
            `(${beginMarker('NAME')} or ${endMarker('NAME')}, alone on its line): ${line}`,
        );
      return;
    }
    const [, kind, name] = m as unknown as [string, 'begin' | 'end', string];
    if (kind === 'begin') {
      if (open)
        throw new BenchmarksMdError(
          `BENCHMARKS.md line ${i + 1}: bench:begin ${name} inside the block ${open.name} begun on line ${open.line + 1}; ` +
            `put ${endMarker(open.name)} where that block ends`,
        );
      const seen = blocks.get(name);
      if (seen)
        throw new BenchmarksMdError(
          `BENCHMARKS.md line ${i + 1}: a second block ${name} (the first begins on line ${seen.begin + 1}); ` +
            'npm run bench would not know which to replace: remove one pair of markers',
        );
      open = { name, line: i };
      return;
    }
    if (!open || open.name !== name)
      throw new BenchmarksMdError(
        `BENCHMARKS.md line ${i + 1}: bench:end ${name} without its bench:begin ${name}` +
          (open ? ` (the open block is ${open.name}, begun on line ${open.line + 1})` : ''),
      );
    blocks.set(name, { begin: open.line, end: i });
    open = undefined;
  });
  if (open)
    throw new BenchmarksMdError(
      `BENCHMARKS.md line ${open.line + 1}: bench:begin ${open.name} has no ${endMarker(open.name)} after it`,
    );
  return blocks;
}

/** A block with its markers, as lines; the text ends with one empty line before the end marker. */
function blockLines(b: GeneratedBlock): string[] {
  return [beginMarker(b.name), ...b.text.trim().split('\n'), '', endMarker(b.name)];
}

/**
 * `doc` with the text between each block's markers replaced by that block's text, everything else
 * as it was. A block `doc` lacks is added, the header at the start and any other at the end (in
 * the order given), and named in `added`. Throws a BenchmarksMdError as {@link generatedBlocks}
 * does, or when `blocks` names one block twice.
 */
export function spliceGenerated(
  doc: string,
  blocks: readonly GeneratedBlock[],
): { text: string; added: string[] } {
  const names = new Set<string>();
  for (const b of blocks) {
    if (names.has(b.name))
      throw new BenchmarksMdError(`the block ${b.name} is given twice to be written`);
    names.add(b.name);
  }
  const places = generatedBlocks(doc);
  const lines = doc === '' ? [] : doc.split('\n');
  // From the last block up, so that the places of the ones above stay valid.
  const present = blocks
    .filter((b) => places.has(b.name))
    .sort((a, b) => places.get(b.name)!.begin - places.get(a.name)!.begin);
  for (const b of present) {
    const place = places.get(b.name)!;
    lines.splice(place.begin, place.end - place.begin + 1, ...blockLines(b));
  }
  const added: string[] = [];
  const header = blocks.find((b) => b.name === HEADER);
  if (header && !places.has(HEADER)) {
    lines.unshift(...blockLines(header), ...(lines.length ? [''] : []));
    added.push(HEADER);
  }
  for (const b of blocks) {
    if (b.name === HEADER || places.has(b.name)) continue;
    while (lines.length && lines.at(-1) === '') lines.pop();
    lines.push(...(lines.length ? [''] : []), ...blockLines(b));
    added.push(b.name);
  }
  if (lines.length && lines.at(-1) !== '') lines.push('');
  return { text: lines.join('\n'), added };
}
