/**
 * The console-encoded event records in a process's output: each text runs from a `separator`
 * line (entry-core's SEPARATOR) to its `EOE` line. Parse each with entry-core's parseConsoleRecord.
 */
export function consoleRecordTexts(output: string, separator: string): string[] {
  const out: string[] = [];
  let start = output.indexOf(separator);
  while (start >= 0) {
    const end = output.indexOf('\nEOE', start);
    if (end < 0) break;
    out.push(output.slice(start, end + 4));
    start = output.indexOf(separator, end);
  }
  return out;
}
