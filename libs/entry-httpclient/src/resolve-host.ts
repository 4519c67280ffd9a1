import { lookup, Resolver } from 'node:dns/promises';

/** The addresses a host name resolves to now (IPv4 and IPv6). */
export type ResolveHost = (host: string) => Promise<string[]>;

/**
 * The system's resolver (getaddrinfo: /etc/hosts, then DNS), or, with `dnsServer`
 * (`host:port`), that DNS server's A and AAAA records.
 */
export function hostResolver(dnsServer: string): ResolveHost {
  if (dnsServer === '')
    return async (host) => (await lookup(host, { all: true })).map((a) => a.address);
  const resolver = new Resolver();
  resolver.setServers([dnsServer]);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value : []),
      ...(v6.status === 'fulfilled' ? v6.value : []),
    ];
    if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
    return found;
  };
}
