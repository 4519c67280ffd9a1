import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, run } from '@svcboot/testkit';

/** A throwaway PostgreSQL cluster on a free port of 127.0.0.1, which a test may stop and start. */
export interface PrivatePostgres {
  readonly addr: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it if running and deletes its files. */
  remove(): Promise<void>;
}

/** The newest `/usr/lib/postgresql/<version>/bin` (Debian's layout), or $PG_BIN. */
function binDir(): string {
  if (process.env['PG_BIN']) return process.env['PG_BIN'];
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql/*/bin; install postgresql or set PG_BIN');
  return path.join(root, versions[0], 'bin');
}

/** initdb and pg_ctl refuse to run as root: run them as the postgres user then. */
async function asServerUser(cmd: string, args: string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', cmd, ...args]);
  else await run(cmd, args);
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  await asServerUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  let running = false;
  const ctl = (args: string[]) => asServerUser(path.join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '60', ...args]);
  const cluster: PrivatePostgres = {
    addr: `127.0.0.1:${port}`,
    port,
    async start() {
      await ctl(['-l', path.join(dir, 'server.log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
      running = true;
    },
    async stop() {
      await ctl(['-m', 'fast', 'stop']);
      running = false;
    },
    async remove() {
      if (running) await cluster.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return cluster;
}
