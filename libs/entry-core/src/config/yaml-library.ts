import { loadSideLibrary } from '../side-library.js';
import type * as Yaml from 'yaml';
import { readPlainScalar, readYamlSubset } from './yaml-subset.js';

/**
 * The `yaml` library, loaded on first use: by a boot.yaml outside the subset `readYamlSubset`
 * reads (anchors, block scalars, ...), a YAML error, or a config problem that needs its line.
 * Built, it is one CommonJS file beside the bundle (dist/yaml-library.cjs, written by
 * tools/scripts/bundle-lib.mjs --side), so a start that never needs it never compiles it; run
 * from the sources (tests), or from a bundle of the app's own, it is the package from node_modules.
 */
export type YamlLibrary = typeof Yaml;

/** The file bundle-lib.mjs writes beside dist/package.js. */
export const YAML_LIBRARY_FILE = './yaml-library.cjs';

let library: YamlLibrary | undefined;

export function yamlLibrary(): YamlLibrary {
  library ??= loadSideLibrary<YamlLibrary>(import.meta.url, YAML_LIBRARY_FILE, 'yaml');
  return library;
}

/**
 * A YAML (or JSON) text's value, as the library's `parse` gives it (and throwing as it does on
 * an error): the subset reader's when the text is in its subset (or one plain scalar), else the
 * library's.
 */
export function parseYaml(
  text: string,
  options?: Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions & Yaml.ToJSOptions,
): unknown {
  const read = readYamlSubset(text) ?? readPlainScalar(text);
  if (read !== undefined) return read.value;
  return yamlLibrary().parse(text, options);
}

/** One scalar's value (`8080`, `true`, `text`), as the library's `parse` gives it. */
export function parseYamlScalar(text: string): unknown {
  const read = readPlainScalar(text);
  if (read !== undefined) return read.value;
  return yamlLibrary().parse(text, { logLevel: 'error' });
}
