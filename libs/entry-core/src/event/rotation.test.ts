import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputSet } from './outputs.js';
import { rotationSchema } from './rotation.js';

let dir: string;
let outputs: OutputSet;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rotation-'));
  outputs = new OutputSet();
});
afterEach(async () => {
  await outputs.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `n` lines of about 100 bytes, each flushed (a batch each), numbered from `from`. */
async function writeLines(file: string, options: object, from: number, n: number): Promise<void> {
  const out = outputs.get(file, rotationSchema.parse(options));
  for (let i = from; i < from + n; i++) {
    out.write(`line ${String(i).padStart(6, '0')} ${'x'.repeat(86)}\n`);
    await outputs.flush();
  }
}

const BACKUP = /^app-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}(-1)?\.log(\.gz)?$/;

describe('lumberjack rotation', () => {
  it('renames a file that would pass maxsize and starts a new one; nothing is lost', async () => {
    const file = path.join(dir, 'app.log');
    // 0.001 MB = 1048 bytes: about ten lines a file.
    await writeLines(file, { maxsize: 0.001 }, 0, 50);
    const names = readdirSync(dir).sort();
    const backups = names.filter((n) => n !== 'app.log');
    expect(backups.length).toBeGreaterThanOrEqual(3);
    for (const b of backups) {
      expect(b).toMatch(BACKUP);
      expect(statSync(path.join(dir, b)).size).toBeLessThanOrEqual(1048);
    }
    const lines = names
      .flatMap((n) => readFileSync(path.join(dir, n), 'utf8').split('\n'))
      .filter((l) => l !== '')
      .map((l) => Number(l.slice(5, 11)))
      .sort((a, b) => a - b);
    expect(lines).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('keeps maxbackups backups and gzips them with compress', async () => {
    const file = path.join(dir, 'app.log');
    const options = { maxsize: 0.001, maxbackups: 2, compress: true };
    await writeLines(file, options, 0, 60);
    const rotation = outputs.get(file) as unknown as { rotationSettled(): Promise<void> };
    await rotation.rotationSettled();
    const backups = readdirSync(dir).filter((n) => n !== 'app.log');
    expect(backups).toHaveLength(2);
    for (const b of backups) {
      expect(b).toMatch(/\.log\.gz$/);
      const text = gunzipSync(readFileSync(path.join(dir, b))).toString('utf8');
      expect(text).toMatch(/^line \d{6} x+\n/);
    }
  });
});
