import type { PortingRule } from './config/porting.js';
import type { RotationOptions } from './event/rotation.js';
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { AppInfo, EnvInfo } from './info.js';
import type { EventFactory } from './event/event-factory.js';
import type { CertBundle } from './builtin/cert-bundle.js';
import type { Output } from './event/output.js';
import type { LogEncoding, LogLevel } from './logger.js';
import type { MiddlewareRegistry } from './middleware/registry.js';
import type { ConfigChange, EntryReload } from './reload/entry-reload.js';
import type { ReloadMetric } from './reload/metrics.js';

/** Bootstrap order: lower phases start first and stop last. Inside a phase, boot.yaml order. */
export const Phase = {
  /** logger, event and cert entries that others refer to. */
  Builtin: 0,
  /** Backend connectors (kvstore, cache, databases). */
  Connector: 100,
  /** Servers, which may use connectors from their handlers. */
  Server: 200,
} as const;

/** What every entry config has. Plugins spread `entryBaseShape` into their schema. */
export interface BaseEntryConfig {
  name: string;
  enabled?: boolean;
  domain?: string;
  description?: string;
}

/** Handed to bootstrap and interrupt. */
export interface LifecycleContext {
  /** Aborted when the step's time is up; long waits should listen to it. */
  readonly signal: AbortSignal;
  /** Milliseconds the step may take. */
  readonly timeoutMs: number;
}

/**
 * What a connector knows of its backend right now (ARCHITECTURE.md §6). `detail` is a short
 * state such as `reconnecting` or `ping failed (ECONNREFUSED)`: /readyz shows it, so no
 * addresses, no secrets.
 */
export interface EntryHealth {
  readonly ok: boolean;
  readonly detail: string;
}

/** A dependency (an entry with `backendHealth()`) that reports not ok. */
export interface DependencyDown {
  /** The entry's name, e.g. `redis`. */
  readonly entry: string;
  /** Its boot.yaml key, e.g. `kvstore`. */
  readonly kind: string;
  /** `EntryHealth.detail`. */
  readonly detail: string;
}

export interface Entry {
  readonly name: string;
  /** The kind as records name it, e.g. `GrpcEntry`. */
  readonly type: string;
  readonly description: string;
  bootstrap(ctx: LifecycleContext): Promise<void>;
  interrupt(ctx: LifecycleContext): Promise<void>;
  /** Payloads of this entry's `Bootstrap` record. */
  bootstrapPayloads?(): Record<string, unknown>;
  /** How long interrupt may take; the app default applies otherwise. */
  readonly shutdownTimeoutMs?: number;
  /**
   * A connector's view of its backend, read on every `/readyz` and on failed calls: synchronous
   * and cheap (no I/O; keep the state from the driver's events or a background probe).
   */
  backendHealth?(): EntryHealth;
  /** Whether `backendHealth()` counts for the app's readiness (a connector's `readinessCheck`; default true). */
  readonly readinessCheck?: boolean;
}

/** What `create` gets besides its validated config. */
export interface EntryContext {
  readonly app: AppInfo;
  readonly env: EnvInfo;
  /** The environment variables the app was booted with (BootOptions.env, else process.env). */
  readonly variables: Readonly<Record<string, string | undefined>>;
  /** `kvstore[redis]`: where this entry is in boot.yaml, for messages. */
  readonly configPath: string;
  /** The app logger this entry writes to (its `loggerEntry`, else the default), bound to the entry name. */
  readonly logger: Logger;
  /** Makes event records for this entry (its `eventEntry`, else the default event logger). */
  readonly events: EventFactory;
  /** A `cert` entry's PEM material, by name. */
  cert(name: string): CertBundle;
  /**
   * Another entry of this app by name (and boot.yaml key), e.g. the `kvstore` a shared rate limit
   * uses. Throws an SvcError naming the config path when there is none. Entries of earlier phases
   * are bootstrapped by the time this entry's bootstrap runs.
   */
  entry(name: string, key?: string): Entry;
  /** A named logger entry's logger, for options like `logger.entry`. */
  namedLogger(name: string): Logger;
  /** Removes secrets of this app's config from text (e.g. a driver's error). */
  redact(text: string): string;
  /**
   * The app's middleware kinds (`buildCallChain` creates the enabled ones); absent, the default
   * registry's (`defaultMiddlewareRegistry`).
   */
  readonly middlewares?: MiddlewareRegistry;
  /** False before bootstrap completes and once shutdown begins. */
  isReady(): boolean;
  /**
   * The app's entries whose `backendHealth()` is not ok now: with `'readiness'`, only those whose
   * `readinessCheck` is not false (what a server's /readyz waits for); with `'all'`, every one
   * (what a failed call's record names). Empty when all are up.
   */
  dependenciesDown(scope: 'readiness' | 'all'): readonly DependencyDown[];
  /** The app's shared write target for `stdout`, `stderr` or a file path. */
  output(path: string, rotation?: RotationOptions): Output;
  /**
   * The app's `svc_config_reloads_total` counter: a server entry shows it on its metrics path
   * (`reloads.register(registry)`). Absent outside an App.
   */
  readonly reloads?: ReloadMetric;
  /** A logger with its own level, encoding and outputs (e.g. a SQL logger). */
  makeLogger(options: {
    level: LogLevel;
    encoding: LogEncoding;
    outputPaths: readonly string[];
    /** `lumberjack`: rotate the files among `outputPaths`. */
    lumberjack?: RotationOptions | undefined;
  }): Logger;
}

/** An entry kind: what a boot.yaml top-level key means. */
export interface EntryPlugin<C extends BaseEntryConfig = BaseEntryConfig, E extends Entry = Entry> {
  /** boot.yaml top-level key, e.g. `grpc`. */
  readonly key: string;
  /** The npm package that registers it (named in "unknown key" errors). */
  readonly packageName: string;
  /** The type records give this kind's entries, e.g. `GrpcEntry`. */
  readonly entryType: string;
  readonly phase: number;
  /** Zod schema of one list item, strict, with every default. */
  readonly schema: z.ZodType<C>;
  /**
   * How rk-boot's options of this kind map onto the schema (docs/porting-from-rk-boot.md),
   * applied to each item before it is validated (config/porting.ts).
   */
  readonly porting?: readonly PortingRule[];
  create(config: C, ctx: EntryContext): E;
  /**
   * Plans a changed configuration of one of its running entries (a reload: SIGHUP,
   * `app.reload()`; README, "Reload"): what changes live and what cannot. Nothing changes before
   * the plan's `apply`. Absent: any change to the kind's entries refuses the reload with
   * `SVC_RELOAD_NOT_LIVE`.
   */
  reload?(entry: E, next: C, change: ConfigChange<C>): EntryReload;
}

/** The config type of a plugin, for typed getters. */
export type ConfigOf<P> = P extends EntryPlugin<infer C, Entry> ? C : never;
export type EntryOf<P> = P extends EntryPlugin<BaseEntryConfig, infer E> ? E : never;
