/** `host:port`, `[v6]:port` or `host` (port 5432). */
export function parseAddress(addr: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(addr);
  const m = bracketed ?? plain;
  if (!m) throw new Error(`addr "${addr}" is not host:port (write IPv6 hosts as [::1]:5432)`);
  const port = m[2] === undefined ? 5432 : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`addr "${addr}" has port ${m[2]}, which is not 1-65535`);
  return { host: m[1]!, port };
}
