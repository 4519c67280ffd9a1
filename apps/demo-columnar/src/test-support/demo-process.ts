import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, plainEnv, startOnFreePort } from '@svcboot/testkit';

const demoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The demo as `nx serve` runs it, on a free port, with its database and ClickHouse chosen by env. */
export class DemoProcess {
  private constructor(
    readonly child: Child,
    readonly port: number,
  ) {}

  /** Starts it on a free port (again on another when that one was taken before it listened). */
  static async start(env: Record<string, string>): Promise<DemoProcess> {
    const { child, port } = await startOnFreePort(
      (port) =>
        Child.start(
          process.execPath,
          ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
          {
            cwd: demoDir,
            env: plainEnv({ PORT: String(port), ...env }),
          },
        ),
      {
        what: 'listening',
        ready: (child, port) => child.stdout.includes(`listening on port ${port}`),
        timeoutMs: 30_000,
      },
    );
    return new DemoProcess(child, port);
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  /** A request; answers status, content type and the body (parsed when JSON). */
  async call(method: string, p: string): Promise<{ status: number; type: string; body: unknown }> {
    const res = await fetch(this.url(p), { method });
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    return {
      status: res.status,
      type,
      body: type.includes('json') ? (JSON.parse(text) as unknown) : text,
    };
  }

  /**
   * SIGINT (Ctrl-C) and wait for the exit code. Not SIGTERM: after SIGTERM an app that serves
   * traffic stays up, not ready, for its drain delay (5 s by default) so a load balancer can stop
   * sending it calls, which these tests have no use for.
   */
  async stop(): Promise<number | null> {
    if (this.child.process.exitCode === null) this.child.process.kill('SIGINT');
    return this.child.exited;
  }
}
