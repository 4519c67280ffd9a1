import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';
import { IGNORED_DIRS } from './services.js';

/*
 * What changed in a service's files, gathered for a short while (editors write a file in several
 * steps, a save-all touches many) and handed over once: its code (restart) or its boot.yaml only
 * (reload).
 */

export interface ChangeBatch {
  /** Files changed under its source folders, relative to the package folder. */
  code: string[];
  /** Whether its boot.yaml changed. */
  config: boolean;
}

export interface ServiceWatchOptions {
  /** The package folder (paths in batches are relative to it). */
  dir: string;
  sourceDirs: readonly string[];
  configFile: string;
  /** How long to wait after the last change before handing over the batch (default 150 ms). */
  debounceMs?: number;
  onChanges: (batch: ChangeBatch) => void;
}

/** Watches a service's source folders (recursively) and its boot.yaml. */
export class ServiceWatch {
  private readonly watchers: FSWatcher[] = [];
  private code = new Set<string>();
  private config = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ServiceWatchOptions) {
    const configDir = path.dirname(options.configFile);
    const configName = path.basename(options.configFile);
    for (const dir of options.sourceDirs) {
      this.watchers.push(
        watch(dir, { recursive: true }, (_event, name) => {
          if (name === null) return;
          const file = path.join(dir, name.toString());
          if (file === options.configFile) return this.note('config', file);
          const rel = path.relative(dir, file);
          if (rel.split(path.sep).some((part) => IGNORED_DIRS.has(part))) return;
          this.note('code', file);
        }),
      );
    }
    // The folder, not the file: editors replace a file (write a copy, rename it over), which
    // ends a watch on the file itself.
    if (!options.sourceDirs.some((d) => isInside(options.configFile, d)))
      this.watchers.push(
        watch(configDir, (_event, name) => {
          if (name !== null && name.toString() === configName)
            this.note('config', options.configFile);
        }),
      );
  }

  private note(kind: 'code' | 'config', file: string): void {
    if (kind === 'config') this.config = true;
    else this.code.add(path.relative(this.options.dir, file));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.options.debounceMs ?? 150);
  }

  private flush(): void {
    const batch: ChangeBatch = { code: [...this.code].sort(), config: this.config };
    this.code = new Set();
    this.config = false;
    this.options.onChanges(batch);
  }

  close(): void {
    clearTimeout(this.timer);
    for (const w of this.watchers) w.close();
  }
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
