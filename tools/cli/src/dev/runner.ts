import { type FSWatcher, mkdtempSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CallRecord, RecordsFile } from './records.js';
import { ServiceProcess } from './service-process.js';
import { type DevService, recordsOverrides, spansOverrides } from './services.js';
import { type ChangeBatch, ServiceWatch } from './watch.js';

/*
 * `svc dev`'s runner: every service of a system in its own process, each restarted when its code
 * changes and reloaded (SIGHUP) when only its boot.yaml does, and the JSON copy of their call
 * records (turned on by SVC_SET, never by editing boot.yaml) read as it grows.
 */

export interface DevRunnerOptions {
  services: readonly DevService[];
  /** svc dev's own lines (what started, restarted, reloaded, and why). */
  log: (line: string) => void;
  /** A line a service printed. */
  output: (service: string, line: string, stream: 'stdout' | 'stderr') => void;
  /** Each call record a service writes, parsed. */
  onRecord?: (service: string, record: CallRecord) => void;
  /** The environment the services start from (default: svc dev's own). */
  env?: NodeJS.ProcessEnv;
  /**
   * Where the services send their spans (svc dev's Zipkin receiver), read when each starts;
   * undefined: their spans go only where their boot.yaml sends them.
   */
  spansEndpoint?: () => string | undefined;
  /** How long changes are gathered before acting on them (default 150 ms). */
  debounceMs?: number;
  stopGraceMs?: number;
}

interface Running {
  service: DevService;
  process: ServiceProcess;
  watch: ServiceWatch;
  /** The SVC_SET assignments it was started with (the records copies). */
  set: string[];
  records: RecordsFile[];
}

export class DevRunner {
  /** Where the JSON copies of the records are written (a fresh temporary folder, removed on stop). */
  readonly runDir: string;
  private readonly running: Running[] = [];
  private recordsWatch: FSWatcher | undefined;
  private stopped: Promise<void> | undefined;
  private readonly onExit = (): void => {
    for (const r of this.running) r.process.killNow();
  };

  constructor(private readonly options: DevRunnerOptions) {
    this.runDir = mkdtempSync(path.join(tmpdir(), 'svc-dev-'));
  }

  /** Starts every service (one after the other: their builds would compete for the CPUs). */
  async start(): Promise<void> {
    process.once('exit', this.onExit);
    this.recordsWatch = watch(this.runDir, () => this.readRecords());
    for (const service of this.options.services) {
      const overrides = recordsOverrides(service.configFile, service.name, this.runDir);
      const entry: Running = {
        service,
        set: [...overrides.set, ...this.spansSet(service)],
        records: overrides.copies.map((c) => new RecordsFile(c.file)),
        process: new ServiceProcess({
          service,
          env: () => this.envOf(entry),
          log: this.options.log,
          output: (line, stream) => this.options.output(service.name, line, stream),
          stopGraceMs: this.options.stopGraceMs,
        }),
        watch: new ServiceWatch({
          dir: service.dir,
          sourceDirs: service.sourceDirs,
          configFile: service.configFile,
          debounceMs: this.options.debounceMs,
          onChanges: (batch) => void this.changed(entry, batch),
        }),
      };
      this.running.push(entry);
      await entry.process.start();
    }
  }

  /** The running pid of each service (undefined for one not running). */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.running.map((r) => [r.service.name, r.process.pid]));
  }

  /** Stops watching, stops every service (SIGINT, all at once) and removes the records folder. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      for (const r of this.running) r.watch.close();
      this.recordsWatch?.close();
      await Promise.all(this.running.map((r) => r.process.close()));
      this.readRecords();
      process.off('exit', this.onExit);
      rmSync(this.runDir, { recursive: true, force: true });
    })();
    return this.stopped;
  }

  private async changed(entry: Running, batch: ChangeBatch): Promise<void> {
    const { service, process: proc } = entry;
    const configName = path.relative(service.dir, service.configFile);
    if (batch.code.length > 0) {
      const files = batch.code.length > 3 ? `${batch.code.length} files` : batch.code.join(', ');
      const why = `${files}${batch.config ? ` and ${configName}` : ''} changed`;
      if (batch.config) entry.set = this.overridesOf(entry);
      await proc.restart(why);
      return;
    }
    if (!batch.config) return;
    let next: string[];
    try {
      next = this.overridesOf(entry);
    } catch (err) {
      this.options.log(`${service.name}: ${configName} changed but ${(err as Error).message}`);
      return;
    }
    if (next.join('\n') !== entry.set.join('\n')) {
      // Its event or traced entries changed: svc dev's overrides (the records copies, the span
      // receiver) are set at start, so a reload is not enough.
      entry.set = next;
      await proc.restart(`${configName} changed its event or traced entries`);
      return;
    }
    await proc.reload(`${configName} changed`);
  }

  private overridesOf(entry: Running): string[] {
    const o = recordsOverrides(entry.service.configFile, entry.service.name, this.runDir);
    entry.records = o.copies.map(
      (c) => entry.records.find((r) => r.file === c.file) ?? new RecordsFile(c.file),
    );
    return [...o.set, ...this.spansSet(entry.service)];
  }

  private spansSet(service: DevService): string[] {
    const endpoint = this.options.spansEndpoint?.();
    return endpoint === undefined ? [] : spansOverrides(service.configFile, endpoint);
  }

  private envOf(entry: Running): NodeJS.ProcessEnv {
    const base = this.options.env ?? process.env;
    // Ours first: SVC_SET's later assignments win, so the developer's own still apply.
    const own = base['SVC_SET'];
    const set = [...entry.set, ...(own ? [own] : [])].join(',');
    return {
      ...base,
      SVC_BOOT_CONFIG: entry.service.configFile,
      SVC_SET: set,
    };
  }

  private readRecords(): void {
    const onRecord = this.options.onRecord;
    if (onRecord === undefined) return;
    for (const r of this.running)
      for (const file of r.records) for (const rec of file.read()) onRecord(r.service.name, rec);
  }
}
