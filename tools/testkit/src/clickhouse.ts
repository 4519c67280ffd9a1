import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, PortTakenError } from './ports.js';
import { Child } from './process.js';
import { waitFor } from './wait.js';

/**
 * A clickhouse-server of its own (Debian's binary, see tools/scripts/clickhouse.sh) on free
 * ports with a temp data folder, for tests that stop and restart the server: the shared one on
 * 8123 is left alone. The data folder outlives `stop()`, so `start()` again brings the data back.
 */
export class PrivateClickHouse {
  private child: Child | undefined;

  private tcpPort = 0;
  /** Set once the server answered: a later start (a restart) keeps its ports. */
  private started = false;

  private constructor(
    readonly dir: string,
    private port: number,
    private readonly configFile: string,
  ) {}

  /** The HTTP port; it may change until the first `start()` has succeeded. */
  get httpPort(): number {
    return this.port;
  }

  static async create(): Promise<PrivateClickHouse> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-clickhouse-'));
    for (const sub of ['data', 'tmp', 'user_files', 'log']) await mkdir(path.join(dir, sub));
    const server = new PrivateClickHouse(dir, 0, path.join(dir, 'config.xml'));
    await server.writeConfig(await freePort(), await freePort());
    return server;
  }

  private async writeConfig(httpPort: number, tcpPort: number): Promise<void> {
    this.port = httpPort;
    this.tcpPort = tcpPort;
    const dir = this.dir;
    await writeFile(
      this.configFile,
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

  /**
   * Starts the server and waits until it answers. The first start moves to new ports when one was
   * taken before the server could bind it (its log says "Address already in use"), up to 5 times.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startOnce();
        this.started = true;
        return;
      } catch (err) {
        if (this.started || attempt >= 5 || !(err instanceof PortTakenError)) throw err;
        await this.writeConfig(await freePort(), await freePort());
      }
    }
  }

  private async startOnce(): Promise<void> {
    // The error log says why a start failed: this start's lines only.
    await rm(path.join(this.dir, 'log', 'error.log'), { force: true });
    this.child = Child.start('clickhouse-server', [`--config-file=${this.configFile}`]);
    const child = this.child;
    await waitFor(
      `clickhouse-server on ${this.addr}`,
      async () => {
        if (child.process.exitCode !== null) return 'exited';
        return this.ping();
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    ).then(async (outcome) => {
      if (outcome !== 'exited') return;
      this.child = undefined;
      const log = await readFile(path.join(this.dir, 'log', 'error.log'), 'utf8').catch(() => '');
      if (/Address already in use/i.test(log))
        throw new PortTakenError(
          `clickhouse-server: port ${this.port} or ${this.tcpPort} was taken\n${log.slice(-2000)}`,
        );
      throw new Error(`clickhouse-server exited: ${child.stderr}\n${log.slice(-2000)}`);
    });
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
