import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { DevService } from './services.js';

/*
 * One service's process under `svc dev`: started (after its build, when it has one), stopped with
 * SIGINT (its clean shutdown; SIGKILL to its process group when it outlives the grace period),
 * restarted, or sent SIGHUP (entry-core reloads boot.yaml). Operations run one after the other.
 * The child is the leader of its own process group, so a terminal's Ctrl-C reaches only `svc dev`,
 * which stops every service once (a second SIGINT would make a service exit at once, uncleanly).
 */

export interface ServiceProcessOptions {
  service: DevService;
  /** The environment of the child (svc dev's, the system's values, SVC_BOOT_CONFIG, SVC_SET). */
  env: () => NodeJS.ProcessEnv;
  /** svc dev's own short lines: what started, restarted, reloaded, exited, and why. */
  log: (line: string) => void;
  /** Each line the service prints, with the stream it came on. */
  output: (line: string, stream: 'stdout' | 'stderr') => void;
  /** How long a stopping service may take before SIGKILL (default 10 s). */
  stopGraceMs?: number;
}

export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private queue: Promise<void> = Promise.resolve();
  private stopping = false;
  private closed = false;

  constructor(private readonly options: ServiceProcessOptions) {}

  get name(): string {
    return this.options.service.name;
  }

  /** The running child's pid (undefined while none runs). */
  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null
      ? this.child.pid
      : undefined;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.startNow());
  }

  /** Stops the running child (if any) and starts a new one; `why` goes to the log. */
  restart(why: string): Promise<void> {
    return this.enqueue(async () => {
      const before = this.pid;
      this.options.log(
        `${this.name}: restarting (${why})${before ? `, stopping pid ${before}` : ''}`,
      );
      await this.stopNow();
      await this.startNow();
    });
  }

  /** SIGHUP: the service reads its boot.yaml again (entry-core's reload), same process. */
  reload(why: string): Promise<void> {
    return this.enqueue(async () => {
      const pid = this.pid;
      if (pid === undefined) {
        // Nothing running (it exited, or its build failed): a fresh start reads the file anyway.
        this.options.log(`${this.name}: ${why}; not running, starting it`);
        await this.startNow();
        return;
      }
      this.options.log(`${this.name}: reloading (${why}): SIGHUP to pid ${pid}`);
      this.child?.kill('SIGHUP');
    });
  }

  /** Stops the child for good; later operations do nothing. */
  close(): Promise<void> {
    const done = this.enqueue(() => this.stopNow(), { evenClosed: true });
    this.closed = true;
    return done;
  }

  /** Last resort when svc dev itself exits: SIGKILL to the child's process group, synchronously. */
  killNow(): void {
    killGroup(this.pid, 'SIGKILL');
  }

  private enqueue(op: () => Promise<void>, opts: { evenClosed?: boolean } = {}): Promise<void> {
    const run = (): Promise<void> =>
      this.closed && opts.evenClosed !== true ? Promise.resolve() : op();
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async startNow(): Promise<void> {
    const { service, log } = this.options;
    const { launch } = service;
    if (launch.build) {
      const { command, args } = launch.build;
      const code = await this.runBuild(command, args);
      if (code !== 0) {
        log(
          `${this.name}: ${command} ${args.join(' ')} failed (exit ${code}); fix it and save: a change starts it again`,
        );
        return;
      }
    }
    const child = spawn(launch.command, launch.args, {
      cwd: service.dir,
      env: this.options.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.stopping = false;
    this.pipe(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        // What it started and left behind (tsx's esbuild, a worker…) goes with it: its group.
        killGroup(child.pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        if (!this.stopping)
          log(
            `${this.name}: pid ${child.pid} exited (${signal ?? `code ${code}`}); a change to its code or boot.yaml starts it again`,
          );
        resolve();
      });
      child.once('error', (err) => {
        log(`${this.name}: cannot start ${launch.command}: ${err.message}`);
        resolve();
      });
    });
    log(`${this.name}: started pid ${child.pid} (${launch.describe})`);
  }

  private async stopNow(): Promise<void> {
    const child = this.child;
    if (child === undefined || this.pid === undefined) return;
    this.stopping = true;
    child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.stopGraceMs ?? 10_000);
    });
    const outcome = await Promise.race([this.exited.then(() => 'exited' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.options.log(`${this.name}: pid ${child.pid} did not stop after SIGINT; SIGKILL`);
      this.killNow();
      await this.exited;
    }
    // Stopped means nothing of it is left: what it started was sent SIGKILL when it exited.
    await groupGone(child.pid);
  }

  private runBuild(command: string, args: readonly string[]): Promise<number | null> {
    return new Promise((resolve) => {
      const build = spawn(command, args, {
        cwd: this.options.service.dir,
        env: this.options.env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.pipe(build);
      build.once('error', () => resolve(-1));
      build.once('exit', (code) => resolve(code));
    });
  }

  private pipe(child: ChildProcess): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream];
      if (readable === null) continue;
      createInterface({ input: readable, crlfDelay: Infinity }).on('line', (line) =>
        this.options.output(line, stream),
      );
    }
  }
}

/** Sends `signal` to every process of the group `pid` leads; nothing when it is gone. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // No process left in the group.
  }
}

/** Resolves once no process of the group `pid` led is left (at most 5 s after a SIGKILL). */
async function groupGone(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
