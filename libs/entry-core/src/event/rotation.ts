import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { z } from '../zod.js';
import { nonNegativeIntSchema, offSchema } from '../schema.js';

/**
 * `lumberjack` of a `logger` or `event` entry (rk-boot's, after Go's lumberjack): every file the
 * entry writes to is rotated once it would grow past `maxsize` megabytes. The file is renamed to
 * `<name>-<time>.<ext>` (`app-2026-11-26T05-35-10.123.log`, UTC unless `localtime`), a new one
 * is opened under the old name, and then, in the background, backups are gzipped (`compress`)
 * and the ones past `maxbackups` or older than `maxage` days removed. Zero means lumberjack's
 * defaults: 100 MB, and keep every backup whatever its age.
 */
export const rotationSchema = z.strictObject({
  /** Megabytes (fractions allowed). 0: 100. */
  maxsize: z.number().nonnegative().default(0),
  /** Days a backup is kept. 0: no limit. */
  maxage: z.number().nonnegative().default(0),
  /** Backups kept. 0: no limit. */
  maxbackups: nonNegativeIntSchema.default(0),
  /** Backup names in local time instead of UTC. */
  localtime: offSchema,
  /** gzip the backups. */
  compress: offSchema,
});
export type RotationOptions = z.output<typeof rotationSchema>;

const MB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The time in a backup's name: `2006-01-02T15-04-05.000`, as lumberjack writes it. */
function stamp(ms: number, local: boolean): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const [y, mo, da, h, mi, s, milli] = local
    ? [
        d.getFullYear(),
        d.getMonth() + 1,
        d.getDate(),
        d.getHours(),
        d.getMinutes(),
        d.getSeconds(),
        d.getMilliseconds(),
      ]
    : [
        d.getUTCFullYear(),
        d.getUTCMonth() + 1,
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
        d.getUTCSeconds(),
        d.getUTCMilliseconds(),
      ];
  return `${p(y, 4)}-${p(mo)}-${p(da)}T${p(h)}-${p(mi)}-${p(s)}.${p(milli, 3)}`;
}

const STAMP = /^(\d{4})-(\d\d)-(\d\d)T(\d\d)-(\d\d)-(\d\d)\.(\d{3})$/;

/** One file's rotation: when it is due, the rename, and the backups' upkeep. */
export class Rotation {
  private readonly maxBytes: number;
  private readonly dir: string;
  private readonly prefix: string;
  private readonly ext: string;
  private milling: Promise<void> = Promise.resolve();
  private lastStamp = '';

  constructor(
    private readonly file: string,
    private readonly options: RotationOptions,
    private readonly report: (err: unknown) => void,
  ) {
    this.maxBytes = (options.maxsize > 0 ? options.maxsize : 100) * MB;
    this.dir = path.dirname(file);
    this.ext = path.extname(file);
    this.prefix = `${path.basename(file, this.ext)}-`;
  }

  /** Whether writing `adding` bytes to a file of `size` bytes goes past the limit (a non-empty file only). */
  due(size: number, adding: number): boolean {
    return size > 0 && size + adding > this.maxBytes;
  }

  /**
   * Closes `fd`, renames the file to its backup name and opens a new one under the old name,
   * synchronously (once per `maxsize`, between two writes); returns the new fd. Then mills the
   * backups in the background.
   */
  rotate(fd: number): number {
    let name = stamp(Date.now(), this.options.localtime);
    // Two rotations within one millisecond: keep both backups.
    if (name === this.lastStamp) name = `${name}-1`;
    this.lastStamp = name;
    // Renamed while open (the old fd follows it), then the new file opened: if that fails the
    // writes go on into the backup rather than nowhere.
    fs.renameSync(this.file, path.join(this.dir, `${this.prefix}${name}${this.ext}`));
    let next: number;
    try {
      next = fs.openSync(this.file, 'a');
    } catch (err) {
      this.report(err);
      return fd;
    }
    fs.closeSync(fd);
    this.milling = this.milling.then(() => this.mill()).catch(this.report);
    return next;
  }

  /** Resolves once the backups' upkeep started so far is done (tests, shutdown). */
  settled(): Promise<void> {
    return this.milling;
  }

  /** The backups, newest first: name and when it was made. */
  private async backups(): Promise<{ file: string; ms: number; gz: boolean }[]> {
    const out: { file: string; ms: number; gz: boolean }[] = [];
    for (const f of await fs.promises.readdir(this.dir)) {
      if (!f.startsWith(this.prefix)) continue;
      const gz = f.endsWith(`${this.ext}.gz`);
      if (!gz && !f.endsWith(this.ext)) continue;
      const middle = f.slice(this.prefix.length, f.length - this.ext.length - (gz ? 3 : 0));
      const m = STAMP.exec(middle.replace(/-1$/, ''));
      if (!m) continue;
      const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as number[];
      const when = this.options.localtime
        ? new Date(y!, mo! - 1, d!, h!, mi!, s!, ms!).getTime()
        : Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
      out.push({ file: path.join(this.dir, f), ms: when, gz });
    }
    return out.sort((a, b) => b.ms - a.ms || b.file.localeCompare(a.file));
  }

  private async mill(): Promise<void> {
    let list = await this.backups();
    const remove: string[] = [];
    if (this.options.maxbackups > 0 && list.length > this.options.maxbackups) {
      remove.push(...list.slice(this.options.maxbackups).map((b) => b.file));
      list = list.slice(0, this.options.maxbackups);
    }
    if (this.options.maxage > 0) {
      const cutoff = Date.now() - this.options.maxage * DAY_MS;
      remove.push(...list.filter((b) => b.ms < cutoff).map((b) => b.file));
      list = list.filter((b) => b.ms >= cutoff);
    }
    for (const f of remove) await fs.promises.rm(f, { force: true });
    if (!this.options.compress) return;
    for (const b of list) {
      if (b.gz) continue;
      const gzFile = `${b.file}.gz`;
      await pipeline(fs.createReadStream(b.file), createGzip(), fs.createWriteStream(gzFile));
      await fs.promises.rm(b.file, { force: true });
    }
  }
}
