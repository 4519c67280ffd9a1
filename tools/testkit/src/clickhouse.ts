import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';
import { Child } from './process.js';
import { waitFor } from './wait.js';

/**
 * A clickhouse-server of its own (Debian's binary, see tools/scripts/clickhouse.sh) on free
 * ports with a temp data folder, for tests that stop and restart the server: the shared one on
 * 8123 is left alone. The data folder outlives `stop()`, so `start()` again brings the data back.
 */
export class PrivateClickHouse {
  private child: Child | undefined;

  private constructor(
    readonly dir: string,
    readonly httpPort: number,
    private readonly configFile: string,
  ) {}

  static async create(): Promise<PrivateClickHouse> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-clickhouse-'));
    const [httpPort, tcpPort] = [await freePort(), await freePort()];
    for (const sub of ['data', 'tmp', 'user_files', 'log']) await mkdir(path.join(dir, sub));
    const configFile = path.join(dir, 'config.xml');
    await writeFile(
      configFile,
      `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/log/server.log</log><errorlog>${dir}/log/error.log</errorlog><console>0</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
</yandex>
`,
    );
    return new PrivateClickHouse(dir, httpPort, configFile);
  }

  get addr(): string {
    return `127.0.0.1:${this.httpPort}`;
  }

  async ping(): Promise<boolean> {
    try {
      const res = await fetch(`http://${this.addr}/ping`);
      return (await res.text()) === 'Ok.\n';
    } catch {
      return false;
    }
  }

  async start(): Promise<void> {
    this.child = Child.start('clickhouse-server', [`--config-file=${this.configFile}`]);
    const child = this.child;
    await waitFor(
      `clickhouse-server on ${this.addr}`,
      async () => {
        if (child.process.exitCode !== null)
          throw new Error(`clickhouse-server exited: ${child.stderr}`);
        return this.ping();
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  }

  /** SIGTERM, then waits until the process is gone and the port answers no more. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    child.process.kill('SIGTERM');
    const exited = await Promise.race([
      child.exited.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 20_000)),
    ]);
    if (!exited) {
      child.kill();
      await child.exited;
    }
    await waitFor(`${this.addr} to stop answering`, async () => !(await this.ping()));
  }

  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
