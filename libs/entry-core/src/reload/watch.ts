import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/**
 * Calls `onChange` once the file has been quiet for `debounceMs` after a change (editors write a
 * file in several steps, or replace it by a rename). Watches the file's folder, so that a file
 * replaced by a rename keeps being watched. Returns a function that stops watching.
 */
export function watchConfigFile(
  file: string,
  debounceMs: number,
  onChange: () => void,
  onError: (err: Error) => void,
): () => void {
  const base = path.basename(file);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher;
  try {
    watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
      if (name !== null && name !== base) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
      timer.unref();
    });
  } catch (err) {
    onError(err as Error);
    return () => undefined;
  }
  watcher.on('error', onError);
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
