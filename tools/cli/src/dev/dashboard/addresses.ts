/*
 * Where a service of `svc dev` listens and where its clients call, from its boot.yaml as written:
 * `${VAR}` and `${VAR:-default}` read from the environment the services get (svc dev's own), as
 * entry-core reads them when the service boots.
 */

/** `text` with each `${VAR}` / `${VAR:-default}` replaced from `env` (an unset VAR without a default: ''). */
export function expandEnv(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_all, name, fallback) => {
    const v = env[name as string];
    return v !== undefined && v !== '' ? v : ((fallback as string | undefined) ?? '');
  });
}

/** The port a server entry listens on (undefined when it is not a port after expansion). */
export function entryPort(
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): number | undefined {
  const raw = options['port'];
  if (raw === undefined) return undefined;
  const port = Number(expandEnv(String(raw), env));
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/** The loopback host to reach a server entry on: its `host` unless it listens on every address. */
export function entryHost(options: Record<string, unknown>, env: NodeJS.ProcessEnv): string {
  const host = options['host'] === undefined ? '' : expandEnv(String(options['host']), env);
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
}

/**
 * The port a client entry calls: a grpcclient's `target` (`dns:///127.0.0.1:8102`, `host:port`)
 * or an httpclient's `baseUrl`.
 */
export function clientPort(
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): number | undefined {
  const raw = options['target'] ?? options['baseUrl'];
  if (typeof raw !== 'string') return undefined;
  const text = expandEnv(raw, env);
  const m = /:(\d+)(?:\/|$)/.exec(text.replace(/^[a-z]+:\/\//, '').replace(/^dns:\/*/, ''));
  const port = m ? Number(m[1]) : undefined;
  return port !== undefined && port > 0 && port < 65536 ? port : undefined;
}
