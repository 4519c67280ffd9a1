/**
 * A child process for the shutdown test: a TCP "server" entry answers `work <ms>` after that
 * many milliseconds; on interrupt it stops accepting and waits for work in flight.
 */
import net from 'node:net';
import { z } from 'zod';
import { Phase, entryBaseShape, registerEntryKind, runApp, type Entry, type EntryPlugin } from '../index.js';

class TcpWorkEntry implements Entry {
  readonly type = 'TcpWorkEntry';
  readonly description = '';
  private server: net.Server | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  constructor(readonly name: string) {}

  async bootstrap(): Promise<void> {
    this.server = net.createServer((socket) => {
      socket.on('data', (buf) => {
        const ms = Number(/work (\d+)/.exec(buf.toString())?.[1] ?? 0);
        socket.write('accepted\n');
        const job = new Promise<void>((resolve) => setTimeout(resolve, ms)).then(() => {
          socket.end('done\n');
        });
        this.inFlight.add(job);
        void job.finally(() => this.inFlight.delete(job));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get port(): number {
    return (this.server!.address() as net.AddressInfo).port;
  }

  async interrupt(): Promise<void> {
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
