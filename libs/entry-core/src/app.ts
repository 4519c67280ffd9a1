import { readFile } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import {
  Phase,
  type BaseEntryConfig,
  type Entry,
  type EntryContext,
  type EntryPlugin,
  type EntryOf,
} from './entry.js';
import {
  BootstrapError,
  ConfigError,
  coreError,
  entryLookupError,
  errorCodes,
  errorMessage,
  printableError,
  formatIssue,
  coreErrors,
  type ConfigIssue,
} from './errors.js';
import { defaultRegistry, PluginRegistry, type AnyEntryPlugin } from './registry.js';
import { assertOnePackageCopy } from './package-copies.js';
import { builtinPlugins } from './builtin/plugins.js';
import type { AnyMiddlewareDefinition } from './middleware/definition.js';
import { defaultMiddlewareRegistry, loadEnabledMiddlewares } from './middleware/definitions.js';
import { withMiddlewareRegistry, type MiddlewareRegistry } from './middleware/registry.js';
import { loadConfig, type LoadedConfig, type LoadedEntry } from './config/load.js';
import { locateConfig } from './config/locate.js';
import type { PortingMode } from './config/porting.js';
import {
  findInstalledKinds,
  findInstalledMiddlewares,
  type InstalledKind,
} from './config/installed-kinds.js';
import { SecretScrubber } from './config/secrets.js';
import { didYouMean } from './config/suggest.js';
import { readEnvInfo, type AppInfo, type EnvInfo } from './info.js';
import { packageDefaults } from './app-defaults.js';
import { OutputSet } from './event/outputs.js';
import { EventLogger } from './event/event-logger.js';
import { EventFactory } from './event/event-factory.js';
import { makeScope } from './event/encode.js';
import { createAppLogger } from './logger.js';
import { timezoneName } from './time.js';
import { withTimeout } from './lifecycle.js';
import { LoggerEntry } from './builtin/logger-entry.js';
import { EventEntry } from './builtin/event-entry.js';
import { CertEntry } from './builtin/cert-entry.js';
import { inSvcbootWorker } from './cluster/protocol.js';
import { runPrimary, workerCount } from './cluster/primary.js';
import { attachWorker, onPrimaryShutdown, reportWorkerReady } from './cluster/worker.js';
import { allWorkersReady } from './cluster/readiness.js';
import type { DependencyDown } from './entry.js';
import type { Event } from './event/event.js';
import { DEPENDENCIES_DOWN_PAIR, dependenciesDown, describeDown, failed } from './dependencies.js';
import { planReload, type AppSettings } from './reload/plan.js';
import { ReloadMetric, type ReloadOutcome } from './reload/metrics.js';
import type { ReloadResult } from './reload/result.js';
import { watchConfigFile } from './reload/watch.js';
import { onPrimaryReload } from './cluster/worker.js';

/**
 * node:fs's readFile as a promise: boot reads one file, and node:fs/promises, which nothing else
 * at start imports, is left unloaded (with what it needs, ~0.8 ms on Node 26 where nothing loaded
 * those before).
 */
const readFileAsync = promisify(readFile);

export interface BootOptions {
  /** boot.yaml's path; otherwise `--config`, `$SVC_BOOT_CONFIG`, then `./boot.yaml` under `cwd`. */
  configFile?: string;
  /** The file's text, for tests and embedding (`configFile` is then only its name in messages). */
  configText?: string;
  /** Arguments read for `--config` and `--set` (default: process.argv.slice(2)). */
  argv?: readonly string[];
  /** Variables for `${VAR}`, `SVC_SET`, `DOMAIN`, … (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where `./boot.yaml` and the app's package.json are looked for (default: process.cwd()). */
  cwd?: string;
  /**
   * The kinds this app knows, besides the built-in logger, event and cert: e.g.
   * `plugins: [grpcPlugin, kvPlugin]`. Given, the app sees only these (added to `registry` when
   * that is given too), so apps with different kinds can share a process. Not given, the app
   * uses `registry`, else every kind imported so far (`defaultRegistry`).
   */
  plugins?: readonly AnyEntryPlugin[];
  /**
   * Middlewares of other packages, made configurable as `middleware.<key>` on every grpc and
   * httpserver entry of this app (its own middleware registry: `middlewareRegistry`'s kinds plus
   * these; svcboot's own need not be listed).
   */
  middlewares?: readonly AnyMiddlewareDefinition[];
  /**
   * The registry to read middleware kinds from (default: `defaultMiddlewareRegistry`, svcboot's
   * own and those that imports registered with `registerMiddleware`). An app given one of its
   * own, e.g. `new MiddlewareRegistry(middlewareDefinitions)`, knows only its kinds (and
   * `middlewares`), not what another import registered into the default one.
   */
  middlewareRegistry?: MiddlewareRegistry;
  /**
   * Boot although two copies of a svcboot package holding a registry are loaded (by default that
   * fails with SVC_PACKAGE_COPIES). For tools that load the packages of several services into
   * one process and pass every kind explicitly; an app never needs it.
   */
  allowPackageCopies?: boolean;
  /**
   * The registry to read entry kinds from (default: `defaultRegistry`, which imports fill). An
   * app given one of its own (`new PluginRegistry()`, or `plugins`) knows only its kinds, not
   * what another import registered into the default one.
   */
  registry?: PluginRegistry;
  /** Time each entry's bootstrap may take before it fails (default 60 s). */
  bootstrapTimeoutMs?: number;
  /** Time each entry's interrupt may take, unless the entry sets its own (default 10 s). */
  shutdownTimeoutMs?: number;
  /**
   * After a shutdown signal, how long readiness reports false before entries stop
   * (`app.drainDelayMs` in boot.yaml wins). Lets a load balancer stop routing here first.
   * Unset: DEFAULT_SIGTERM_DRAIN_DELAY_MS after SIGTERM, 0 after SIGINT or `app.shutdown()`.
   */
  drainDelayMs?: number;
  /**
   * `rk-boot`: load a boot.yaml written for rk-boot with warnings instead of errors for the keys
   * rk-boot ignores (docs/porting-from-rk-boot.md). `app.porting` and `SVC_PORTING` win.
   */
  porting?: PortingMode;
}

/**
 * The drain delay after SIGTERM when none is configured: Kubernetes sends SIGTERM while the pod's
 * endpoints are still being removed from Services and load balancers (a few seconds), so the
 * app keeps serving, not ready, with `Connection: close` on HTTP/1.1 responses, for this long
 * before its entries stop. Within the default 30 s termination grace period with the entries'
 * shutdown timeouts (10 s by default).
 */
export const DEFAULT_SIGTERM_DRAIN_DELAY_MS = 5000;

interface Running {
  loaded: LoadedEntry;
  entry: Entry;
  events: EventFactory;
  logger: Logger;
}

type State = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** Loads and validates boot.yaml (every error at once) and creates its enabled entries. */
export async function boot(options: BootOptions = {}): Promise<App> {
  // Before the file: with two copies of entry-core, a key registered into the other copy would
  // be blamed on a missing import.
  if (!options.allowPackageCopies) assertOnePackageCopy();
  // The app's middleware kinds: its registry's (the default one unless given), plus its own
  // (for this app only).
  const middlewareRegistry = options.middlewareRegistry ?? defaultMiddlewareRegistry;
  const middlewares =
    options.middlewares === undefined || options.middlewares.length === 0
      ? middlewareRegistry
      : middlewareRegistry.with(options.middlewares);
  const argv = options.argv ?? process.argv.slice(2);
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  let file: string;
  let text: string;
  if (options.configText !== undefined) {
    file = options.configFile ?? 'boot.yaml';
    text = options.configText;
  } else {
    const located = options.configFile
      ? { file: path.resolve(cwd, options.configFile), origin: 'configFile' }
      : locateConfig(argv, env, cwd);
    file = located.file;
    try {
      text = await readFileAsync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(file, [
        {
          path: file,
          message: `cannot read the config file (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); it was chosen by ${located.origin}. Pass --config PATH or set SVC_BOOT_CONFIG`,
        },
      ]);
    }
  }
  const appDir = options.configText !== undefined ? cwd : path.dirname(file);
  let installed: Map<string, InstalledKind> | undefined;
  let installedMiddlewares: Map<string, InstalledKind> | undefined;
  // The same reading of the file as at boot (interpolation, --set, SVC_SET, $DOMAIN, porting),
  // again for each reload.
  const load = async (configText: string): Promise<LoadedConfig> => {
    const loaded = withMiddlewareRegistry(middlewares, () =>
      loadConfig({
        file,
        text: configText,
        argv,
        env,
        registry: registryFor(options),
        // Read from node_modules only when a key is unknown, to name the package that provides it.
        installedKinds: () => (installed ??= findInstalledKinds([appDir, cwd])),
        installedMiddlewares: () =>
          (installedMiddlewares ??= findInstalledMiddlewares([appDir, cwd])),
        appDefaults: packageDefaults(appDir),
        ...(options.porting ? { porting: options.porting } : {}),
      }),
    );
    // The code of the middlewares it enables (svcboot's built-ins load theirs on demand).
    await loadEnabledMiddlewares(
      middlewares,
      loaded.entries.map((e) => e.config),
    );
    return loaded;
  };
  const loaded = await load(text);
  const workers = workerCount(loaded.workers);
  if (workers > 1 && !inSvcbootWorker) {
    // The primary: it forks the workers (each runs this same script and boots this same file)
    // and supervises them until they stop; it runs no entry and never returns (README, Workers).
    return runPrimary({
      workers,
      reloadOnSignal: loaded.reload.signal,
      drainDelayMs: loaded.drainDelayMs ?? options.drainDelayMs,
      defaultSigtermDrainMs: DEFAULT_SIGTERM_DRAIN_DELAY_MS,
    });
  }
  const app = new App(
    loaded.app,
    readEnvInfo(env),
    loaded.entries,
    new SecretScrubber(loaded.secrets),
    file,
    {
      ...options,
      drainDelayMs: loaded.drainDelayMs ?? options.drainDelayMs,
    },
    middlewares,
  );
  app.reportConfigWarnings(loaded.warnings);
  app.useReloadSource({
    settings: loaded,
    load: async (configText) => {
      if (configText !== undefined) return load(configText);
      if (options.configText !== undefined) return load(options.configText);
      let again: string;
      try {
        again = await readFileAsync(file, 'utf8');
      } catch (err) {
        throw new ConfigError(file, [
          {
            path: file,
            message: `cannot read the config file (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})`,
          },
        ]);
      }
      return load(again);
    },
  });
  return app;
}

/** Where an app's reloads read boot.yaml from, and the `app` section it runs with. */
type ReloadSource = {
  /** Reads and validates the file again (or `configText`), as boot() did; throws a ConfigError. */
  load(configText?: string): Promise<LoadedConfig>;
  settings: AppSettings;
};

function registryFor(options: BootOptions): PluginRegistry {
  if (options.plugins === undefined) return options.registry ?? defaultRegistry;
  return (options.registry ?? new PluginRegistry()).with([...builtinPlugins, ...options.plugins]);
}

/** A booted boot.yaml: its entries, and their bootstrap and shutdown. */
export class App {
  readonly env: EnvInfo;
  readonly info: AppInfo;
  /** The default app logger (stdout, console encoding). */
  readonly logger: Logger;
  private readonly outputs = new OutputSet();
  private readonly defaultEvents: EventLogger;
  private readonly timezone = timezoneName();
  private readonly running: Running[] = [];
  private readonly disabled: LoadedEntry[] = [];
  private readonly started: Running[] = [];
  private state: State = 'created';
  private stopping: Promise<boolean> | undefined;
  private readonly bootstrapTimeoutMs: number;
  private readonly shutdownTimeoutMs: number;
  /** `app.drainDelayMs` or BootOptions.drainDelayMs, when set. */
  private readonly drainDelayMs: number | undefined;
  /** The environment variables boot read (BootOptions.env, else process.env). */
  private readonly variables: Readonly<Record<string, string | undefined>>;
  /** Whether an enabled entry serves traffic (phase Server): only then does SIGTERM drain by default. */
  private readonly servesTraffic: boolean;
  /** Where reloads read the file from (set by boot()). */
  private reloadSource: ReloadSource | undefined;
  /** Reloads run one after the other: each waits for the one before. */
  private reloadQueue: Promise<unknown> = Promise.resolve();
  /** `svc_config_reloads_total`, shown by every server entry's metrics path. */
  private readonly reloadMetric = new ReloadMetric();
  /** Stops watching boot.yaml (`app.reload.watch`). */
  private stopWatching: (() => void) | undefined;

  constructor(
    info: AppInfo,
    env: EnvInfo,
    entries: readonly LoadedEntry[],
    private scrubber: SecretScrubber,
    readonly configFile: string,
    options: BootOptions,
    /** The app's middleware kinds (EntryContext.middlewares). */
    private readonly middlewares: MiddlewareRegistry = defaultMiddlewareRegistry,
  ) {
    this.info = info;
    this.env = env;
    this.bootstrapTimeoutMs = options.bootstrapTimeoutMs ?? 60_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
    this.drainDelayMs = options.drainDelayMs;
    this.variables = options.env ?? process.env;
    this.servesTraffic = entries.some((e) => e.enabled && e.plugin.phase >= Phase.Server);
    attachWorker();
    this.logger = createAppLogger({
      level: 'info',
      encoding: 'console',
      outputs: [this.outputs.get('stdout')],
    });
    this.defaultEvents = new EventLogger('console', [this.outputs.get('stdout')]);
    const ordered = entries
      .map((e, i) => ({ e, i }))
      .sort((a, b) => a.e.plugin.phase - b.e.plugin.phase || a.i - b.i)
      .map(({ e }) => e);
    for (const loaded of ordered) {
      if (!loaded.enabled) {
        this.disabled.push(loaded);
        continue;
      }
      const logger = this.loggerFor(loaded).child({ entryName: loaded.name });
      const events = new EventFactory(
        this.eventLoggerFor(loaded),
        makeScope(
          this.timezone,
          {
            appName: info.name,
            appVersion: info.version,
            entryName: loaded.name,
            entryType: loaded.plugin.entryType,
          },
          sortedEnv(env),
        ),
        this.nameDependenciesDown,
      );
      let entry: Entry;
      try {
        entry = loaded.plugin.create(loaded.config, this.contextFor(loaded, logger, events));
      } catch (err) {
        // The entry's own code (a lib's SvcError) stays in the message: ConfigError has its own.
        const codes = errorCodes(err);
        throw new ConfigError(configFile, [
          {
            path: loaded.configPath,
            message: `${this.redact(errorMessage(err))}${codes.length ? ` [${codes.join(', caused by ')}]` : ''}`,
          },
        ]);
      }
      this.running.push({ loaded, entry, events, logger });
    }
  }

  /** The entry named `name` (of kind `key` when given). Fails with the names that do exist. */
  entry<E extends Entry = Entry>(name: string, key?: string): E {
    const hit = this.running.find(
      (r) => r.loaded.name === name && (key === undefined || r.loaded.key === key),
    );
    if (hit) return hit.entry as E;
    const off = this.disabled.find((d) => d.name === name && (key === undefined || d.key === key));
    if (off) throw entryLookupError('SVC_ENTRY_DISABLED', [off.key, name, this.configFile]);
    const other = this.running.find((r) => r.loaded.name === name);
    if (other && key !== undefined) {
      throw entryLookupError('SVC_ENTRY_WRONG_KIND', [name, other.loaded.key, key]);
    }
    const names = this.running
      .filter((r) => key === undefined || r.loaded.key === key)
      .map((r) => r.loaded.name);
    throw entryLookupError('SVC_ENTRY_NOT_FOUND', [
      name,
      key,
      this.configFile,
      didYouMean(name, names),
      names,
    ]);
  }

  /** Every enabled entry, in bootstrap order. */
  entries(): Entry[] {
    return this.running.map((r) => r.entry);
  }

  /**
   * True once every entry has bootstrapped, until shutdown begins. In a worker of
   * `app.workers` > 1, only while every worker is ready.
   */
  isReady(): boolean {
    return this.state === 'running' && allWorkersReady();
  }

  /**
   * Entries whose `backendHealth()` is not ok now (`'readiness'`: those with `readinessCheck` not
   * false). Servers' /readyz answers 503 while the `'readiness'` list is not empty.
   */
  dependenciesDown(scope: 'readiness' | 'all' = 'readiness'): DependencyDown[] {
    return dependenciesDown(this.keyed, scope);
  }

  /** The entries with their keys, made once (the list does not change after the constructor). */
  private keyedEntries: { key: string; entry: Entry }[] | undefined;
  private get keyed(): { key: string; entry: Entry }[] {
    return (this.keyedEntries ??= this.running.map((r) => ({ key: r.loaded.key, entry: r.entry })));
  }

  /** A failed call's record gets `dependenciesDown` when some dependency is down. */
  private readonly nameDependenciesDown = (event: Event): void => {
    if (!failed(event)) return;
    const down = dependenciesDown(this.keyed, 'all');
    if (down.length > 0) event.addPair(DEPENDENCIES_DOWN_PAIR, describeDown(down));
  };

  /** Removes this app's secrets from text. */
  redact(text: string): string {
    return this.scrubber.scrub(text);
  }

  /**
   * Bootstraps every entry: by phase, then file order. When one fails, the ones already started
   * are interrupted in reverse and this rejects with a BootstrapError naming the entry.
   */
  async bootstrap(): Promise<void> {
    if (this.state !== 'created') throw coreError('SVC_BOOTSTRAP_TWICE', [this.state]);
    this.state = 'starting';
    for (const r of this.running) {
      const { loaded, entry, events, logger } = r;
      logger.info(`Bootstrap ${loaded.key} entry`);
      const event = events.begin('Bootstrap');
      try {
        await withTimeout(`bootstrap of ${loaded.configPath}`, this.bootstrapTimeoutMs, (ctx) =>
          entry.bootstrap(ctx),
        );
      } catch (err) {
        const message = this.redact(errorMessage(err));
        event.setError(message);
        event.payloads = safePayloads(entry);
        events.write(event.finish('Error'));
        const codes = errorCodes(err);
        logger.error(
          `Bootstrap ${loaded.key} entry failed: ${message}${codes.length ? ` [${codes.join(', caused by ')}]` : ''}`,
        );
        this.state = 'failed';
        await this.stopStarted('rollback');
        await this.outputs.flush();
        throw new BootstrapError(loaded.key, loaded.name, message, { cause: err });
      }
      event.payloads = safePayloads(entry);
      events.write(event.finish('OK'));
      this.started.push(r);
    }
    this.state = 'running';
    reportWorkerReady(true);
    this.watchConfig();
  }

  /**
   * Stops the app: readiness goes false, entries are interrupted in reverse bootstrap order
   * (each within its timeout), and logs are flushed. Resolves true when every step succeeded.
   * `drainDelayMs`: how long readiness is false before entries stop (default: the configured
   * `app.drainDelayMs`, else 0).
   */
  shutdown(reason = 'shutdown', drainDelayMs = this.drainDelayMs ?? 0): Promise<boolean> {
    this.stopping ??= (async () => {
      const wasRunning = this.state === 'running';
      this.state = 'stopping';
      this.stopWatching?.();
      reportWorkerReady(false);
      this.logger.info(`Shutdown begins (${reason})`);
      if (wasRunning && drainDelayMs > 0) {
        this.logger.info(`Not ready; entries stop in ${drainDelayMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
      }
      const clean = await this.stopStarted(reason);
      this.logger.info(clean ? 'Shutdown complete' : 'Shutdown complete, with errors');
      await this.outputs.close();
      this.state = 'stopped';
      return clean;
    })();
    return this.stopping;
  }

  /**
   * Waits for SIGINT or SIGTERM, then shuts down (after SIGTERM with a drain delay of
   * DEFAULT_SIGTERM_DRAIN_DELAY_MS when an entry serves traffic, unless `app.drainDelayMs` says
   * otherwise: an app of connectors only has no load balancer to wait for). Resolves the exit
   * code: 0 for a clean stop, 1 when a step failed. A second signal during shutdown exits at once
   * with code 1. Meanwhile SIGHUP reloads boot.yaml (`reload()`; off with `app.reload.signal: false`).
   */
  waitForShutdown(signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): Promise<number> {
    return new Promise((resolve) => {
      // Signal listeners do not hold the event loop open: an app with no server would exit at once.
      const keepAlive = setInterval(() => undefined, 1 << 30);
      let received = false;
      // In a worker of `app.workers` > 1 the primary gets the signal and asks for the shutdown;
      // a terminal's Ctrl-C also reaches the workers, and that copy is not a second signal.
      let byPrimary = false;
      const stop = (signal: NodeJS.Signals, drainDelayMs?: number): void => {
        const delay =
          drainDelayMs ??
          this.drainDelayMs ??
          (signal === 'SIGTERM' && this.servesTraffic ? DEFAULT_SIGTERM_DRAIN_DELAY_MS : 0);
        void this.shutdown(signal, delay).then((clean) => {
          for (const s of signals) process.off(s, onSignal);
          process.off('SIGHUP', onHangup);
          offPrimary();
          offReload();
          clearInterval(keepAlive);
          resolve(clean ? 0 : 1);
        });
      };
      const onSignal = (signal: NodeJS.Signals): void => {
        if (received && byPrimary) {
          byPrimary = false;
          this.logger.info(`Received ${signal}; already shutting down as the primary asked`);
          return;
        }
        if (received) {
          this.logger.error(`Received ${signal} again during shutdown; exiting now`);
          process.exit(1);
        }
        received = true;
        stop(signal);
      };
      for (const s of signals) process.on(s, onSignal);
      // SIGHUP reloads boot.yaml (`app.reload.signal`, default on; README, "Reload"). With
      // `app.workers` the primary gets it and asks each worker, which answers with its result.
      const onHangup = (): void => {
        this.logger.info('Received SIGHUP; reloading the configuration');
        void this.reload();
      };
      if (this.reloadSource?.settings.reload.signal !== false && !signals.includes('SIGHUP'))
        process.on('SIGHUP', onHangup);
      const offReload = onPrimaryReload(() => this.reload());
      const offPrimary = onPrimaryShutdown((signal, drainDelayMs) => {
        if (received) return;
        received = true;
        byPrimary = true;
        stop(signal, drainDelayMs);
      });
    });
  }

  private async stopStarted(reason: string): Promise<boolean> {
    let clean = true;
    while (this.started.length > 0) {
      const { loaded, entry, logger } = this.started.pop()!;
      const timeoutMs = entry.shutdownTimeoutMs ?? this.shutdownTimeoutMs;
      logger.info(`Interrupt ${loaded.key} entry (${reason})`);
      try {
        await withTimeout(`interrupt of ${loaded.configPath}`, timeoutMs, (ctx) =>
          entry.interrupt(ctx),
        );
      } catch (err) {
        clean = false;
        logger.error(`Interrupt ${loaded.key} entry failed: ${this.redact(errorMessage(err))}`);
      }
    }
    return clean;
  }

  private contextFor(loaded: LoadedEntry, logger: Logger, events: EventFactory): EntryContext {
    return {
      app: this.info,
      env: this.env,
      variables: this.variables,
      configPath: loaded.configPath,
      logger,
      events,
      cert: (name) => this.builtin(CertEntry, 'cert', name).bundle,
      namedLogger: (name) => this.builtin(LoggerEntry, 'logger', name).logger,
      entry: (name, key) => this.entry(name, key),
      redact: (text) => this.redact(text),
      middlewares: this.middlewares,
      reloads: this.reloadMetric,
      isReady: () => this.isReady(),
      dependenciesDown: (scope) => this.dependenciesDown(scope),
      output: (p, rotation) => this.outputs.get(p, rotation),
      makeLogger: (o) =>
        createAppLogger({
          level: o.level,
          encoding: o.encoding,
          outputs: o.outputPaths.map((p) => this.outputs.get(p, o.lumberjack)),
        }),
    };
  }

  private builtin<T extends Entry>(
    type: abstract new (...args: never[]) => T,
    key: string,
    name: string,
  ): T {
    const entry = this.entry(name, key);
    if (!(entry instanceof type))
      throw entryLookupError('SVC_ENTRY_WRONG_KIND', [name, undefined, key]);
    return entry;
  }

  private loggerFor(loaded: LoadedEntry): Logger {
    const ref = (loaded.config as { loggerEntry?: string }).loggerEntry;
    if (ref) return this.builtin(LoggerEntry, 'logger', ref).logger;
    return this.defaultBuiltin(LoggerEntry, 'logger')?.logger ?? this.logger;
  }

  private eventLoggerFor(loaded: LoadedEntry): EventLogger {
    const ref = (loaded.config as { eventEntry?: string }).eventEntry;
    if (ref) return this.builtin(EventEntry, 'event', ref).eventLogger;
    return this.defaultBuiltin(EventEntry, 'event')?.eventLogger ?? this.defaultEvents;
  }

  /** The `logger`/`event` entry marked `default: true` (rk-boot's), created before the others. */
  private defaultBuiltin<T extends Entry>(
    type: abstract new (...args: never[]) => T,
    key: string,
  ): T | undefined {
    const hit = this.running.find(
      (r) =>
        r.loaded.key === key &&
        (r.loaded.config as { default?: boolean }).default === true &&
        r.entry instanceof type,
    );
    return hit?.entry as T | undefined;
  }

  /**
   * Reads boot.yaml again (as boot() did: `${VAR}`, `--set`, `SVC_SET`, `$DOMAIN`), validates all
   * of it, and applies what changed, whole or not at all (README, "Reload"): the middleware
   * options of grpc and httpserver entries (calls in flight finish with the middlewares they
   * started with) and the level of logger entries change live; a change that needs a restart (a
   * port, an entry added or removed, a connector's options …) refuses the reload with its path
   * and code, and an invalid file is refused with the usual errors. The running configuration
   * stays unless the result is `applied`. Each reload is logged, writes a `Reload` record and
   * counts in `svc_config_reloads_total{result}`. `configText` replaces the file's text (tests,
   * embedding). Never rejects. In a worker of `app.workers`, this worker only: SIGHUP to the
   * primary reloads every worker.
   */
  reload(options: { configText?: string } = {}): Promise<ReloadResult> {
    const run = (): Promise<ReloadResult> => this.reloadNow(options.configText);
    const result = this.reloadQueue.then(run, run);
    this.reloadQueue = result;
    return result;
  }

  private async reloadNow(configText: string | undefined): Promise<ReloadResult> {
    const began = this.reloadEvents().begin('Reload');
    const result = await this.planAndApply(configText);
    this.reloadMetric.count(result.outcome);
    const problems = result.problems.map((p) => `  - ${this.redact(formatIssue(p))}`).join('\n');
    if (result.outcome === 'applied' || result.outcome === 'unchanged')
      this.logger.info(result.message);
    else this.logger.error(`${result.message}${problems ? `\n${problems}` : ''}`);
    began.payloads = {
      configFile: this.configFile,
      result: result.outcome,
      changes: result.changes,
      problems: result.problems.map((p) => ({ path: p.path, code: p.code ?? '' })),
    };
    if (result.problems.length > 0) began.setError(this.redact(result.message));
    this.reloadEvents().write(began.finish(RELOAD_CODES[result.outcome]));
    return result;
  }

  private async planAndApply(configText: string | undefined): Promise<ReloadResult> {
    const source = this.reloadSource;
    if (source === undefined || this.state !== 'running')
      return {
        outcome: 'refused',
        changes: [],
        problems: [],
        message: coreErrors.SVC_RELOAD_NOT_RUNNING.message(
          source === undefined ? 'not booted from a file' : this.state,
        ),
      };
    let next: LoadedConfig;
    try {
      next = await source.load(configText);
    } catch (err) {
      const problems: readonly ConfigIssue[] =
        err instanceof ConfigError
          ? err.issues
          : [{ path: this.configFile, message: this.redact(errorMessage(err)) }];
      return invalid(this.configFile, problems);
    }
    const plan = planReload(
      this.running.map((r) => ({ loaded: r.loaded, entry: r.entry })),
      source.settings,
      next,
    );
    if (plan.refused.length > 0) {
      plan.discard();
      if (plan.refused.some((p) => p.code === 'SVC_RELOAD_INVALID'))
        return invalid(this.configFile, plan.refused);
      return {
        outcome: 'refused',
        changes: [],
        problems: plan.refused,
        message: coreErrors.SVC_RELOAD_REFUSED.message(this.configFile, plan.refused.length),
      };
    }
    // The configuration was shown to the app by this point; it is swapped in one synchronous step.
    plan.apply();
    const byPath = new Map(next.entries.map((e) => [e.configPath, e]));
    for (const r of this.running) r.loaded = byPath.get(r.loaded.configPath) ?? r.loaded;
    this.disabled.splice(0, this.disabled.length, ...next.entries.filter((e) => !e.enabled));
    this.scrubber = this.scrubber.with(next.secrets);
    if (plan.changes.length === 0)
      return {
        outcome: 'unchanged',
        changes: [],
        problems: [],
        message: `Reload of ${this.configFile}: nothing changed`,
      };
    return {
      outcome: 'applied',
      changes: plan.changes,
      problems: [],
      message: `Reload of ${this.configFile} applied: ${plan.changes.join(', ')}`,
    };
  }

  /** The `Reload` records' factory: the app's default event entry (else stdout), entry `app`. */
  private reloadEventFactory: EventFactory | undefined;
  private reloadEvents(): EventFactory {
    return (this.reloadEventFactory ??= new EventFactory(
      this.defaultBuiltin(EventEntry, 'event')?.eventLogger ?? this.defaultEvents,
      makeScope(
        this.timezone,
        {
          appName: this.info.name,
          appVersion: this.info.version,
          entryName: 'app',
          entryType: 'App',
        },
        sortedEnv(this.env),
      ),
    ));
  }

  /** With `app.reload.watch`: reloads when boot.yaml changes on disk (after its debounce). */
  private watchConfig(): void {
    const settings = this.reloadSource?.settings.reload;
    if (!settings?.watch || this.stopWatching) return;
    this.stopWatching = watchConfigFile(
      this.configFile,
      settings.debounceMs,
      () => {
        this.logger.info(`${this.configFile} changed; reloading the configuration`);
        void this.reload();
      },
      (err) =>
        this.logger.warn(`Cannot watch ${this.configFile} (app.reload.watch): ${err.message}`),
    );
  }

  /** @internal boot() tells the app where its reloads read the file from, and its `app` section. */
  useReloadSource(source: {
    load(configText?: string): Promise<LoadedConfig>;
    settings: Pick<LoadedConfig, 'app' | 'drainDelayMs' | 'workers' | 'reload' | 'porting'>;
  }): void {
    this.reloadSource = source;
  }

  /**
   * What boot.yaml asked for that was accepted with a warning (porting: ignored keys); logged
   * once at boot through the app logger.
   */
  get configWarnings(): readonly ConfigIssue[] {
    return this.warnings;
  }
  private warnings: readonly ConfigIssue[] = [];

  /** @internal boot() hands the loader's warnings over and they are logged. */
  reportConfigWarnings(warnings: readonly ConfigIssue[]): void {
    this.warnings = warnings;
    for (const w of warnings)
      this.logger.warn(
        { configPath: w.path, code: w.code },
        `${this.configFile}: ${formatIssue(w)}`,
      );
  }
}

/** A reload's record `resCode`, by outcome (gRPC code names, as the other records have). */
const RELOAD_CODES: Readonly<Record<ReloadOutcome, string>> = {
  applied: 'OK',
  unchanged: 'OK',
  refused: 'FailedPrecondition',
  invalid: 'InvalidArgument',
};

function invalid(file: string, problems: readonly ConfigIssue[]): ReloadResult {
  return {
    outcome: 'invalid',
    changes: [],
    problems,
    message: coreErrors.SVC_RELOAD_INVALID.message(file, problems.length),
  };
}

function sortedEnv(env: EnvInfo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(env).sort()) {
    const v = env[key as keyof EnvInfo];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function safePayloads(entry: Entry): Record<string, unknown> {
  try {
    return entry.bootstrapPayloads?.() ?? {};
  } catch {
    return {};
  }
}

/** A typed getter for one kind, e.g. `export const grpcEntry = entryGetter(grpcPlugin)`. */
export function entryGetter<P extends EntryPlugin<BaseEntryConfig, Entry>>(
  plugin: P,
): (app: App, name: string) => EntryOf<P> {
  return (app, name) => app.entry<EntryOf<P>>(name, plugin.key);
}

/**
 * The usual main: boot, let `setup` register handlers, bootstrap, wait for a signal, shut down,
 * and exit 0 (clean) or 1 (failed boot or failed shutdown step). Errors go to stderr without secrets.
 */
export async function runApp(
  setup?: (app: App) => void | Promise<void>,
  options?: BootOptions,
): Promise<never> {
  let app: App | undefined;
  try {
    app = await boot(options);
    await setup?.(app);
    await app.bootstrap();
  } catch (err) {
    process.stderr.write(`${app ? app.redact(printableError(err)) : printableError(err)}\n`);
    if (app) await app.shutdown('failed boot');
    process.exit(1);
  }
  const code = await app.waitForShutdown();
  process.exit(code);
}
