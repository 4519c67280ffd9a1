import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/*
 * The JSON copy of a service's call records (records-copy overrides, services.ts), read as it
 * grows: each complete line is handed over parsed; a line that is not JSON is skipped.
 */

export type CallRecord = Record<string, unknown>;

/** Reads the lines appended to one file since the last read. */
export class RecordsFile {
  private offset = 0;
  private rest = '';
  private decoder = new StringDecoder('utf8');

  constructor(readonly file: string) {}

  /** The records appended since the last call (none while the file does not exist). */
  read(): CallRecord[] {
    if (!existsSync(this.file)) return [];
    const size = statSync(this.file).size;
    if (size < this.offset) {
      // Truncated or replaced: start again from its beginning.
      this.offset = 0;
      this.rest = '';
      this.decoder = new StringDecoder('utf8');
    }
    if (size === this.offset) return [];
    const fd = openSync(this.file, 'r');
    try {
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      // A character cut at the end of the read is completed by the next one (the decoder keeps it).
      const text = this.rest + this.decoder.write(buf.subarray(0, n));
      const lines = text.split('\n');
      this.rest = lines.pop() ?? '';
      const out: CallRecord[] = [];
      for (const line of lines) {
        if (line.trim() === '') continue;
        try {
          const v: unknown = JSON.parse(line);
          if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(v as CallRecord);
        } catch {
          // Not a record (a partial write is kept in `rest`, so this is another writer's text).
        }
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }
}
