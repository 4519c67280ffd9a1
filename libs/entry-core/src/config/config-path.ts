/** A path into boot.yaml: property names and list indexes, as the YAML document nests them. */
export type DocPath = ReadonlyArray<string | number>;

/**
 * Formats a path for people: entries are addressed by name, e.g. `grpc[greeter].middleware.logging`.
 * `entryName` replaces the list index of the entry (the second segment) when known.
 */
export function formatPath(path: DocPath, entryName?: string): string {
  let out = '';
  path.forEach((segment, i) => {
    if (typeof segment === 'number') {
      out += i === 1 && entryName !== undefined ? `[${entryName}]` : `[${segment}]`;
    } else {
      out += out === '' ? segment : `.${segment}`;
    }
  });
  return out === '' ? '(root)' : out;
}
