import { spawn, type ChildProcess } from 'node:child_process';
import { isListening, onFreePorts, PortTakenError } from './ports.js';
import { waitFor } from './wait.js';

/** Node's arguments that run a TypeScript file of the workspace from its sources (tsx, the svcboot-source condition). */
export const SOURCE_NODE_ARGS: readonly string[] = [
  '--conditions=svcboot-source',
  '--import',
  'tsx',
];

/** The environment for children: ours, without colour (test runners force it on). */
export function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  delete env['FORCE_COLOR'];
  return env;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, capturing its output; rejects when it exits non-zero. */
export function run(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; allowFailure?: boolean } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? plainEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && !options.allowFailure) {
        reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}\n${stdout}\n${stderr}`));
      } else {
        resolve({ code, stdout, stderr });
      }
    });
  });
}

/** A long-running child whose output is collected as it comes. */
export class Child {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  constructor(readonly process: ChildProcess) {
    process.stdout?.on('data', (b: Buffer) => (this.stdout += b.toString()));
    process.stderr?.on('data', (b: Buffer) => (this.stderr += b.toString()));
    this.exited = new Promise((resolve) => process.on('exit', (code) => resolve(code)));
  }

  static start(
    cmd: string,
    args: readonly string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ): Child {
    return new Child(
      spawn(cmd, args, {
        cwd: options.cwd,
        env: options.env ?? plainEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  }

  /** Starts `script` (a TypeScript file of the workspace) on this Node, from the sources (SOURCE_NODE_ARGS). */
  static startSource(
    script: string,
    options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ): Child {
    return Child.start(process.execPath, [...SOURCE_NODE_ARGS, script], options);
  }

  /**
   * Waits until the child printed `marker` and `port` on 127.0.0.1 accepts connections. Rejects
   * at once when the child exits first: with a PortTakenError when its output says the address
   * was in use (so `onFreePort` starts it again on another port), else with its output.
   */
  async listening(port: number, marker = 'listening on port', timeoutMs = 30_000): Promise<void> {
    await this.until(
      'the app to listen',
      async () => this.stdout.includes(marker) && (await isListening(port)),
      timeoutMs,
    );
  }

  /**
   * Polls `ready` until it holds, as waitFor does, but rejects at once when the child exits
   * first: with a PortTakenError when its output says the address was in use (EADDRINUSE), else
   * with its exit code and output.
   */
  async until(
    what: string,
    ready: () => boolean | Promise<boolean>,
    timeoutMs = 30_000,
  ): Promise<void> {
    await waitFor(
      what,
      async () => {
        if (await ready()) return true;
        if (this.process.exitCode === null && this.process.signalCode === null) return false;
        return 'exited' as const;
      },
      { timeoutMs, intervalMs: 50 },
    )
      .catch((err: Error) => {
        throw new Error(
          `${err.message}; the child's output:\n${`${this.stdout}\n${this.stderr}`.slice(-4000)}`,
        );
      })
      .then((outcome) => {
        if (outcome === true) return;
        const output = `${this.stdout}\n${this.stderr}`;
        const how = `exited (${this.process.exitCode ?? this.process.signalCode}) before ${what}`;
        if (/EADDRINUSE|address already in use/i.test(output))
          throw new PortTakenError(`the child ${how}: its port was taken\n${output.slice(-2000)}`);
        throw new Error(`the child ${how}; its output:\n${output.slice(-4000)}`);
      });
  }

  /** Waits (polling, with a deadline) for the process to end; its exit code, null when a signal ended it. */
  async waitForExit(timeoutMs = 20_000): Promise<number | null> {
    await waitFor(
      'the child process to exit',
      () => this.process.exitCode !== null || this.process.signalCode !== null,
      { timeoutMs, intervalMs: 50 },
    );
    return this.process.exitCode;
  }

  /** Sends SIGKILL if it is still running (for test cleanup). */
  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null)
      this.process.kill('SIGKILL');
  }
}

/**
 * Starts a server child on free ports (`start` gets `count` of them, from freePort) and waits until
 * `ready` holds (by default: it printed 'listening on port' and the first port accepts
 * connections); when a port was taken before the child could bind it (it exited saying
 * EADDRINUSE), starts it again on new ports (onFreePorts). `start` registers the child for the
 * test's cleanup. Returns the child and its ports.
 */
export async function startOnFreePorts(
  count: number,
  start: (ports: number[]) => Child,
  {
    ready,
    what = 'the app to listen',
    timeoutMs = 30_000,
  }: {
    ready?: (child: Child, ports: number[]) => boolean | Promise<boolean>;
    what?: string;
    timeoutMs?: number;
  } = {},
): Promise<{ child: Child; ports: number[] }> {
  return onFreePorts(count, async (ports) => {
    const child = start(ports);
    try {
      if (ready) await child.until(what, () => ready(child, ports), timeoutMs);
      else await child.listening(ports[0]!, 'listening on port', timeoutMs);
    } catch (err) {
      child.kill();
      throw err;
    }
    return { child, ports };
  });
}

/** `startOnFreePorts` with one port: the child and its port. */
export async function startOnFreePort(
  start: (port: number) => Child,
  options: {
    ready?: (child: Child, port: number) => boolean | Promise<boolean>;
    what?: string;
    timeoutMs?: number;
  } = {},
): Promise<{ child: Child; port: number }> {
  const { ready, ...rest } = options;
  const { child, ports } = await startOnFreePorts(1, ([port]) => start(port!), {
    ...rest,
    ...(ready ? { ready: (c: Child, [port]: number[]) => ready(c, port!) } : {}),
  });
  return { child, port: ports[0]! };
}
