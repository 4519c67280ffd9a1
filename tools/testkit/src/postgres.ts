import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onFreePort, PortTakenError } from './ports.js';
import { run } from './process.js';

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
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions[0])
    throw new Error(
      'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin; install postgresql or set PG_BIN',
    );
  return path.join(root, versions[0], 'bin');
}

async function serverUserIds(): Promise<{ uid: number; gid: number }> {
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** initdb and pg_ctl refuse to run as root: run them as the postgres user then. */
async function asServerUser(cmd: string, args: string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', cmd, ...args]);
  else await run(cmd, args);
}

/**
 * initdb + pg_ctl start. Without `password` every connection is trusted; with it, TCP
 * connections must give it (scram-sha-256) for user postgres. `tls` turns on TLS with a new
 * self-signed certificate for CN=localhost (not trusted by anyone).
 */
export async function startPrivatePostgres(
  options: { password?: string; tls?: boolean } = {},
): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-pg-'));
  const owner = process.getuid?.() === 0 ? await serverUserIds() : undefined;
  if (owner) await chown(dir, owner.uid, owner.gid);
  const data = path.join(dir, 'data');
  const auth = ['-A', 'trust'];
  if (options.password !== undefined) {
    const pwfile = path.join(dir, 'pwfile');
    await writeFile(pwfile, `${options.password}\n`, { mode: 0o600 });
    if (owner) await chown(pwfile, owner.uid, owner.gid);
    auth.splice(0, 2, '--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
  }
  await asServerUser(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    ...auth,
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const settings = [`-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off'];
  if (options.tls) {
    const cert = path.join(dir, 'server.crt');
    const key = path.join(dir, 'server.key');
    await run('openssl', [
      'req',
      '-new',
      '-x509',
      '-days',
      '2',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    if (owner) for (const f of [cert, key]) await chown(f, owner.uid, owner.gid);
    await chmod(key, 0o600);
    settings.push('-c ssl=on', `-c ssl_cert_file=${cert}`, `-c ssl_key_file=${key}`);
  }
  let running = false;
  const ctl = (args: string[]) =>
    asServerUser(path.join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '60', ...args]);
  const log = path.join(dir, 'server.log');
  const startOn = async (port: number): Promise<void> => {
    try {
      await ctl(['-l', log, '-o', [`-p ${port}`, ...settings].join(' '), 'start']);
    } catch (err) {
      // The server says why in its log; a port taken first is one onFreePort tries again.
      const said = await readFile(log, 'utf8').catch(() => '');
      if (/could not bind|Address already in use/i.test(said))
        throw new PortTakenError(`postgres: port ${port} was taken\n${said.slice(-2000)}`);
      throw err;
    }
  };
  let port: number;
  try {
    port = await onFreePort(async (free) => {
      await startOn(free);
      return free;
    });
    running = true;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const cluster: PrivatePostgres = {
    addr: `127.0.0.1:${port}`,
    port,
    async start() {
      await startOn(port);
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
  return cluster;
}
