/**
 * A child process for the shutdown test: a TCP "server" entry takes `work`, answers `accepted`,
 * and finishes that piece of work (answering `done`) only when the same connection sends
 * `finish`, so the test decides when the work ends: after the SIGTERM was received. On interrupt
 * it says on stdout how much work is in flight (`INTERRUPT in-flight=<n>`), stops accepting and
 * waits for that work.
 */
import net from 'node:net';
import { z } from '../zod.js';
import {
  Phase,
  entryBaseShape,
  registerEntryKind,
  runApp,
  type Entry,
  type EntryPlugin,
} from '../index.js';

class TcpWorkEntry implements Entry {
  readonly type = 'TcpWorkEntry';
  readonly description = '';
  private server: net.Server | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  constructor(readonly name: string) {}

  async bootstrap(): Promise<void> {
    this.server = net.createServer((socket) => {
      let text = '';
      let finish: (() => void) | undefined;
      socket.on('data', (buf) => {
        text += buf.toString();
        let nl: number;
        while ((nl = text.indexOf('\n')) >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          if (line === 'work' && !finish) {
            const job = new Promise<void>((resolve) => (finish = resolve)).then(() => {
              socket.end('done\n');
            });
            this.inFlight.add(job);
            void job.finally(() => this.inFlight.delete(job));
            socket.write('accepted\n');
          } else if (line === 'finish') {
            finish?.();
          }
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get port(): number {
    return (this.server!.address() as net.AddressInfo).port;
  }

  async interrupt(): Promise<void> {
    process.stdout.write(`INTERRUPT in-flight=${this.inFlight.size}\n`);
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    await Promise.all(this.inFlight);
    await closed;
  }
}

const plugin: EntryPlugin<{ name: string }, TcpWorkEntry> = {
  key: 'tcpwork',
  packageName: 'drain-fixture',
  entryType: 'TcpWorkEntry',
  phase: Phase.Server,
  schema: z.strictObject({ ...entryBaseShape }),
  create: (config) => new TcpWorkEntry(config.name),
};

registerEntryKind(plugin);

await runApp(
  async (app) => {
    const entry = app.entry<TcpWorkEntry>('work', 'tcpwork');
    const announce = setInterval(() => {
      if (app.isReady()) {
        clearInterval(announce);
        process.stdout.write(`READY port=${entry.port}\n`);
      }
    }, 10);
  },
  { configText: 'app: { name: drain }\ntcpwork:\n  - name: work\n', argv: [] },
);
