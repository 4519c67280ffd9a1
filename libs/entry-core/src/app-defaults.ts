import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** name, version and description of the nearest package.json at or above `dir`. */
export function packageDefaults(dir: string): {
  name: string;
  version: string;
  description: string;
} {
  let current = path.resolve(dir);
  for (;;) {
    const file = path.join(current, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        return {
          name: typeof pkg['name'] === 'string' ? pkg['name'] : path.basename(current),
          version: typeof pkg['version'] === 'string' ? pkg['version'] : '',
          description: typeof pkg['description'] === 'string' ? pkg['description'] : '',
        };
      } catch {
        break;
      }
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return { name: path.basename(path.resolve(dir)), version: '', description: '' };
}
