import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Replica {
  readonly port: number;
  readonly process: ChildProcess;
  kill(): Promise<void>;
}

/** Starts a callee replica process (test-support/replica.ts) and waits for it to listen. */
export function startReplica(name: string, port = 0): Promise<Replica> {
  const child = spawn(
    process.execPath,
    ['--conditions=svcboot-source', '--import', 'tsx', path.join(here, 'replica.ts')],
    {
      env: { ...process.env, PORT: String(port), REPLICA: name },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m)
        resolve({
          port: Number(m[1]),
          process: child,
          kill: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGKILL');
            }),
        });
    });
    child.once('exit', (code) => reject(new Error(`replica ${name} exited (${code}): ${err}`)));
  });
}

/** A TCP port nothing listens on (bound, then released). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns true or `ms` pass. */
export async function until(
  check: () => Promise<boolean> | boolean,
  ms: number,
  what: string,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
