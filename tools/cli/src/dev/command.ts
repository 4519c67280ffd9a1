import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SYSTEM_FILE } from '../system/system-file.js';
import { devError } from './errors.js';
import { readCatalog } from './dashboard/catalog.js';
import { Dashboard, RecordHub } from './dashboard/server.js';
import { DevRunner } from './runner.js';
import { type DevService, singleService, systemServices } from './services.js';

export const DEV_USAGE = `svc dev: run a service, or every service of a system, while you edit them

  svc dev [--dir .] [--config boot.yaml]      one service (its package folder and boot.yaml)
  svc dev --system svc.system.yaml [--dir .]  every service of a system (docs/kubernetes.md, "A system");
                                              the default when --dir holds svc.system.yaml and no boot.yaml
          [--dashboard-port 9400]             the dashboard's port on 127.0.0.1 (0: any free one)
          [--no-dashboard]                    no dashboard

Each service runs in its own process (src/main.ts under tsx, else its build then its main), with
the ports of its boot.yaml. A change to its code (src/) restarts it; a change to its boot.yaml
alone reloads it (SIGHUP, same process). Ctrl-C stops them all. The dashboard shows each
service's entries and methods, calls them (the explorer), its calls as they happen, their
traces across services and the service graph. docs/dev.md describes it.`;

/** The dashboard's default port (on 127.0.0.1). */
export const DEFAULT_DASHBOARD_PORT = 9400;

/** Which services `svc dev` runs, from its flags. */
export function devServicesFromFlags(flags: {
  dir: string;
  config?: string | undefined;
  system?: string | undefined;
}): DevService[] {
  let systemFile = flags.system;
  if (systemFile === '') systemFile = SYSTEM_FILE;
  if (
    systemFile === undefined &&
    flags.config === undefined &&
    !existsSync(path.join(flags.dir, 'boot.yaml')) &&
    existsSync(path.join(flags.dir, SYSTEM_FILE))
  )
    systemFile = SYSTEM_FILE;
  if (systemFile !== undefined) {
    if (flags.config !== undefined)
      throw devError(
        'SVC_CLI_DEV_BAD_FLAG',
        "--config is for one service; a system names each service's boot.yaml in its system file",
      );
    return systemServices(path.resolve(flags.dir, systemFile));
  }
  return [singleService(flags.dir, flags.config ?? 'boot.yaml')];
}

/**
 * `svc dev`: starts the services and runs until SIGINT (or SIGTERM), then stops them all and
 * resolves.
 */
export async function devCommand(
  argv: readonly string[],
  out: (line: string) => void,
  err: (line: string) => void = out,
): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string', default: '.' },
        config: { type: 'string' },
        system: { type: 'string' },
        'dashboard-port': { type: 'string' },
        'no-dashboard': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (e) {
    throw devError('SVC_CLI_DEV_BAD_FLAG', `${(e as Error).message}\n\n${DEV_USAGE}`);
  }
  if (values['help']) {
    out(DEV_USAGE);
    return;
  }
  const str = (flag: string): string | undefined => {
    const v = values[flag];
    return typeof v === 'string' ? v : undefined;
  };
  const services = devServicesFromFlags({
    dir: str('dir') ?? '.',
    config: str('config'),
    system: str('system'),
  });
  const portText = str('dashboard-port') ?? String(DEFAULT_DASHBOARD_PORT);
  if (!/^\d+$/.test(portText) || Number(portText) > 65535)
    throw devError(
      'SVC_CLI_DEV_BAD_FLAG',
      `--dashboard-port must be a port (0-65535; 0 for any free one), not "${portText}"`,
    );
  const width = Math.max(...services.map((s) => s.name.length));
  const hub = new RecordHub();
  // svc dev's own lines (started, restarted, reloaded, exited, and why), the last 200: the dashboard shows them.
  const log: Array<{ time: string; line: string }> = [];
  const runner = new DevRunner({
    services,
    log: (line) => {
      log.push({ time: new Date().toISOString(), line });
      if (log.length > 200) log.shift();
      err(`[svc dev] ${line}`);
    },
    output: (service, line, stream) =>
      (stream === 'stdout' ? out : err)(`${service.padEnd(width)} | ${line}`),
    onRecord: (service, record) => hub.add(service, record),
    // Each traced entry also sends its spans to the dashboard (started before the services).
    spansEndpoint: () => (dashboard ? `${dashboard.url}api/v2/spans` : undefined),
  });
  let dashboard: Dashboard | undefined;
  if (values['no-dashboard'] !== true) {
    try {
      dashboard = await Dashboard.start({
        port: Number(portText),
        catalog: () => readCatalog(services),
        records: hub,
        services,
        pids: () => runner.pids(),
        log: () => log,
      });
    } catch (e) {
      throw devError(
        'SVC_CLI_DEV_BAD_FLAG',
        `the dashboard cannot listen on 127.0.0.1:${portText} (${(e as Error).message}); pass --dashboard-port with a free port, 0 for any, or --no-dashboard`,
        e,
      );
    }
  }
  // Registered before the first start: a Ctrl-C during a build still stops what started.
  const stopped = new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // A second Ctrl-C while stopping: do not wait for the services any more.
      process.once('SIGINT', () => {
        err('[svc dev] second SIGINT: killing the services');
        process.exit(130);
      });
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  err(
    `[svc dev] ${services.length} service${services.length === 1 ? '' : 's'}: ${services.map((s) => s.name).join(', ')}; records copied to ${runner.runDir}; Ctrl-C stops them all`,
  );
  if (dashboard) err(`[svc dev] dashboard: ${dashboard.url}`);
  await runner.start();
  const signal = await stopped;
  err(`[svc dev] ${signal}: stopping ${services.map((s) => s.name).join(', ')}`);
  await runner.stop();
  await dashboard?.close();
  err('[svc dev] stopped');
}
