import { isIP } from 'node:net';

/** A target as grpc-js takes it, and how many addresses it names up front (0: resolved by DNS). */
export interface ChannelTarget {
  /** What grpc-js's Client is given: `dns:///h:p`, `ipv4:a:p,b:p`, `ipv6:[a]:p`, `unix:/path`. */
  readonly grpcTarget: string;
  /** The authority calls carry (`:authority`), the host of the target. */
  readonly display: string;
  /**
   * The DNS server a `dns://<server>/host:port` target names ('' for none): grpc-js asks it only
   * when GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true, else it uses the system's resolver.
   */
  readonly dnsServer?: string;
}

const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s/[\]]+)):(\d{1,5})$/;

/** `host:port` or `[v6]:port`, or an explanation of what is wrong with it. */
function hostPort(text: string): { host: string; port: number } | string {
  const m = HOST_PORT.exec(text);
  if (!m) return `"${text}" is not host:port (IPv6 as [addr]:port)`;
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return `port ${port} of "${text}" is outside 1-65535`;
  if (m[1] !== undefined && isIP(host) !== 6) return `"${host}" is not an IPv6 address`;
  return { host, port };
}

/**
 * Parses a `grpcclient` target: `dns:///host:port` (also `dns:host:port`, and
 * `dns://dns-server:53/host:port` to ask that DNS server), `static:///h1:p1,h2:p2`
 * (IP addresses: grpc-js's `ipv4:` / `ipv6:` resolvers), `unix:/path` / `unix:///path`, or a bare
 * `host:port` (DNS). Returns the grpc-js target, or a message saying what is wrong.
 */
export function parseTarget(target: string): ChannelTarget | string {
  const t = target.trim();
  if (t === '')
    return 'the target is empty; write dns:///host:port, static:///ip:port,… or unix:/path';
  if (t.startsWith('unix:')) {
    const p = t.startsWith('unix:///') ? t.slice('unix://'.length) : t.slice('unix:'.length);
    if (p === '' || p === '/') return `"${t}" names no socket path; write unix:/path/to.sock`;
    return { grpcTarget: `unix:${p}`, display: 'localhost' };
  }
  if (t.startsWith('static:')) {
    const list = t.replace(/^static:(\/\/\/)?/, '');
    if (list === '') return `"${t}" names no address; write static:///ip:port,ip:port`;
    const v4: string[] = [];
    const v6: string[] = [];
    for (const item of list.split(',')) {
      const hp = hostPort(item.trim());
      if (typeof hp === 'string') return `in "${t}": ${hp}`;
      const family = isIP(hp.host);
      if (family === 4) v4.push(`${hp.host}:${hp.port}`);
      else if (family === 6) v6.push(`[${hp.host}]:${hp.port}`);
      else
        return `in "${t}": "${hp.host}" is not an IP address; static:/// lists IP addresses (use dns:///${hp.host}:${hp.port} for a name)`;
    }
    if (v4.length > 0 && v6.length > 0)
      return `"${t}" mixes IPv4 and IPv6 addresses; grpc-js's static resolvers take one family`;
    return v4.length > 0
      ? { grpcTarget: `ipv4:${v4.join(',')}`, display: 'localhost' }
      : { grpcTarget: `ipv6:${v6.join(',')}`, display: 'localhost' };
  }
  let rest = t;
  /** `dns://8.8.8.8:53/host:port`: the DNS server to ask (grpc-js's resolver takes it). */
  let dnsServer = '';
  if (t.startsWith('dns:')) {
    const m = /^dns:\/\/([^/]*)\//.exec(t);
    if (t.startsWith('dns://') && !m) return `"${t}" is not dns:///host:port`;
    dnsServer = m?.[1] ?? '';
    rest = m ? t.slice(m[0].length) : t.slice('dns:'.length);
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    return `"${t}" has an unknown scheme; write dns:///host:port, static:///ip:port,… or unix:/path`;
  }
  const hp = hostPort(rest);
  if (typeof hp === 'string') return `in "${t}": ${hp}`;
  const host = isIP(hp.host) === 6 ? `[${hp.host}]` : hp.host;
  return {
    grpcTarget: `dns://${dnsServer}/${host}:${hp.port}`,
    display: `${host}:${hp.port}`,
    dnsServer,
  };
}
