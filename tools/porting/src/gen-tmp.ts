import { fixtures, load } from './fixtures.js';
import { reasonOf } from './reasons.js';
for (const mode of ['strict', 'rk-boot'] as const) {
  let ok = 0;
  const rows: string[] = [];
  for (const f of fixtures()) {
    const o = load(f, mode);
    if (o.loaded) { ok++; continue; }
    const ids = [...new Set(o.issues.map((i) => reasonOf(i)?.id ?? `UNMATCHED ${i.path}: ${i.message}`))].sort();
    rows.push(`  '${f.name}': [${ids.map((i) => `'${i}'`).join(', ')}],`);
  }
  console.log(`// ${mode}: ${ok} load, ${rows.length} refused`);
  console.log(rows.join('\n'));
}
