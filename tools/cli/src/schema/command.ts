import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bootSchemaFor, SCHEMA_FILE } from './boot-schema.js';
import { optionsTable } from './markdown.js';

export const SCHEMA_USAGE = `svc schema [--out FILE] [--markdown KIND]
  Write the JSON Schema of boot.yaml for the entry kinds installed in this project (every
  package in node_modules with svcboot.entryKey, and the built-in logger, event and cert) to
  stdout, or to FILE (e.g. --out ${SCHEMA_FILE}, the file a scaffold's boot.yaml names for the
  YAML language server). --markdown KIND prints the options of one kind (e.g. cache) as a
  markdown table instead: option, type, default and the schema's description.`;

export async function schemaCommand(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      out: { type: 'string', short: 'o' },
      markdown: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    out(SCHEMA_USAGE);
    return;
  }
  const cwd = process.cwd();
  const schema = await bootSchemaFor(cwd);
  if (values.markdown !== undefined) {
    out(optionsTable(JSON.parse(schema.text), values.markdown));
    return;
  }
  if (values.out === undefined) {
    out(schema.text.trimEnd());
    return;
  }
  const file = path.resolve(cwd, values.out);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, schema.text);
  const rel = path.relative(cwd, file);
  out(`wrote ${rel.startsWith('..') ? file : rel} (keys: app, ${schema.keys.join(', ')})`);
}
