import os from 'node:os';

/** The `app` section of boot.yaml, defaulted from the app's package.json. */
export interface AppInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  /** rk-boot's app metadata (`app.keywords`, …), shown by the common service's info. */
  readonly keywords?: readonly string[];
  readonly homeUrl?: string;
  readonly docsUrl?: readonly string[];
  readonly maintainers?: readonly string[];
}

/** Where the process runs, as records and the meta headers report it. */
export interface EnvInfo {
  readonly arch: string;
  /** `$DOMAIN`, else `*`. */
  readonly domain: string;
  readonly hostname: string;
  readonly localIP: string;
  readonly os: string;
  readonly az?: string;
  readonly realm?: string;
  readonly region?: string;
}

export function readEnvInfo(env: Readonly<Record<string, string | undefined>>): EnvInfo {
  const info: { -readonly [K in keyof EnvInfo]: EnvInfo[K] } = {
    arch: os.arch(),
    domain: currentDomain(env),
    hostname: os.hostname(),
    localIP: firstLocalIPv4(),
    os: os.platform(),
  };
  if (env['AZ']) info.az = env['AZ'];
  if (env['REALM']) info.realm = env['REALM'];
  if (env['REGION']) info.region = env['REGION'];
  return info;
}

export function currentDomain(env: Readonly<Record<string, string | undefined>>): string {
  const d = env['DOMAIN'];
  return d === undefined || d === '' ? '*' : d;
}

function firstLocalIPv4(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const addr of addrs ?? []) {
      if (addr.family === 'IPv4' && !addr.internal) return addr.address;
    }
  }
  return '127.0.0.1';
}
