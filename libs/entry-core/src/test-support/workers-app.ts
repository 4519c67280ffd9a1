/**
 * A child process for the workers tests (`app.workers`, default 2 here, from $WORKERS): a small
 * HTTP "server" entry on $PORT that answers `GET /pid` with the worker's pid (also in
 * `X-Worker-Pid`), writes one event record per request (with the pid as a pair) and counts
 * requests in its registry; `/crash` answers, then throws an uncaught exception; `/livez`,
 * `/readyz` and `/metrics` are entry-core's HealthRoutes over `workersRegistry`. With
 * $FAIL_BOOT set, its bootstrap fails (a crash loop at startup); with $HOLD_FILE set, worker 2's
 * bootstrap waits until that file exists (a worker slow to start). With $EVENTS_OUT set (output
 * paths, comma-separated), the records go to an `event` entry writing JSON lines there, and
 * $FILLER sets the length of the record's `filler` pair (default 6000).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { Counter, Registry } from 'prom-client';
import { z } from '../zod.js';
import {
  Phase,
  entryBaseShape,
  observabilityShape,
  registerEntryKind,
  runApp,
  type Entry,
  type EntryContext,
  type EntryPlugin,
} from '../index.js';
import { HealthRoutes, collectProcessMetrics, workersRegistry, WORKER_ENV } from '../toolkit.js';

const schema = z.strictObject({ ...entryBaseShape, ...observabilityShape, port: z.number() });
type Config = z.output<typeof schema>;

class PidEntry implements Entry {
  readonly type = 'PidEntry';
  readonly description = '';
  private readonly server: http.Server;
  private readonly registry = new Registry();
  private draining = false;
  constructor(
    private readonly config: Config,
    private readonly ctx: EntryContext,
  ) {
    const requests = new Counter({
      name: 'fixture_requests_total',
      help: 'Requests to /pid',
      registers: [this.registry],
    });
    collectProcessMetrics(this.registry);
    const routes = new HealthRoutes({
      isReady: () => ctx.isReady(),
      isDraining: () => this.draining,
      registry: workersRegistry(ctx.configPath, this.registry),
      metricsPath: '/metrics',
    });
    this.server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (path === '/pid') {
        requests.inc();
        const event = ctx.events.begin('GET /pid');
        event.addPair('pid', String(process.pid));
        // By default a long pair, so that a record is much bigger than a pipe's atomic write (4 KiB).
        event.addPair('filler', filler);
        ctx.events.write(event.finish('OK'));
        res.setHeader('X-Worker-Pid', String(process.pid));
        res.end(String(process.pid));
        return;
      }
      if (path === '/crash') {
        res.end('crashing');
        setTimeout(() => {
          throw new Error('crash requested');
        }, 10);
        return;
      }
      void Promise.resolve(routes.answer(req.method, path)).then((answer) => {
        if (!answer) {
          res.statusCode = 404;
          res.end();
          return;
        }
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      });
    });
  }
  get name(): string {
    return this.config.name;
  }
  async bootstrap(): Promise<void> {
    if (process.env['FAIL_BOOT']) throw new Error('bootstrap fails on purpose (FAIL_BOOT)');
    const hold = process.env['HOLD_FILE'];
    if (hold && process.env[WORKER_ENV] === '2')
      while (!existsSync(hold)) await new Promise((r) => setTimeout(r, 20));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.config.port, '127.0.0.1', () => resolve());
    });
    this.ctx.logger.info(
      `pid entry listening on port ${(this.server.address() as net.AddressInfo).port}`,
    );
  }
  async interrupt(): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await closed;
  }
}

const filler = 'x'.repeat(Number(process.env['FILLER'] ?? 6000));
const eventsOut = process.env['EVENTS_OUT']?.split(',');

const plugin: EntryPlugin<Config, PidEntry> = {
  key: 'pid',
  packageName: 'workers-fixture',
  entryType: 'PidEntry',
  phase: Phase.Server,
  schema,
  create: (config, ctx) => new PidEntry(config, ctx),
};
registerEntryKind(plugin);

await runApp(undefined, {
  configText: `app:
  name: workers-fixture
  workers: \${WORKERS:-2}
  drainDelayMs: \${DRAIN_MS:-0}
${
  eventsOut
    ? `event:
  - name: records
    encoding: json
    outputPaths: [${eventsOut.map((p) => JSON.stringify(p)).join(', ')}]
`
    : ''
}pid:
  - name: web
    port: \${PORT}
${eventsOut ? '    eventEntry: records\n' : ''}`,
  argv: [],
});
