export interface HostPort {
  host: string;
  port: number;
}

const DEFAULT_PORT = 6379;

/** `host:port`, `[v6]:port` or `host` (port 6379) into parts; a bad port is a clear error. */
export function parseAddress(addr: string): HostPort {
  if (addr.includes('://')) throw new Error(`address "${addr}" is a URL; write host:port (credentials go in user and pass)`);
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr);
  const [host, port] = v6 ? [v6[1]!, v6[2]] : splitLastColon(addr);
  if (host === '') throw new Error(`address "${addr}" has no host; write host:port`);
  if (port === undefined) return { host, port: DEFAULT_PORT };
  const n = Number(port);
  if (!/^\d+$/.test(port) || n < 1 || n > 65535) throw new Error(`address "${addr}" has an invalid port "${port}"; write host:port`);
  return { host, port: n };
}

function splitLastColon(addr: string): [string, string | undefined] {
  const i = addr.lastIndexOf(':');
  return i < 0 ? [addr, undefined] : [addr.slice(0, i), addr.slice(i + 1)];
}
