import { z } from '../zod.js';
import { coreError } from '../errors.js';
/** A parsed `host:port`. */
export interface HostPort {
  host: string;
  port: number;
  /** The scheme written before `://`, when the connector accepts one (e.g. `https`). */
  scheme?: string;
}

export interface HostPortOptions {
  /** The port of an address written without one; absent, the port is required. */
  defaultPort?: number;
  /** Schemes accepted before `://` (e.g. `['http', 'https']`); absent, a URL is refused. */
  schemes?: readonly string[];
  /** Why a URL is refused, e.g. "credentials go in user and pass". */
  urlHint?: string;
}

/**
 * The one host:port parser of the connectors: `host:port`, `[v6]:port`, `host` or `[v6]` (with
 * `defaultPort`), and `scheme://host:port[/]` where `schemes` allows it. Throws an Error that
 * quotes the address and says how to write it.
 */
export function parseHostPort(addr: string, options: HostPortOptions = {}): HostPort {
  const example = 'host:port';
  let rest = addr.trim();
  let scheme: string | undefined;
  const url = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/.exec(rest);
  if (url) {
    scheme = url[1]!.toLowerCase();
    if (!options.schemes?.includes(scheme)) {
      const allowed = options.schemes?.length
        ? ` or ${options.schemes.map((s) => `${s}://host:port`).join(', ')}`
        : '';
      throw coreError('SVC_ADDRESS_INVALID', [
        addr,
        `is a URL; write ${example}${allowed}${options.urlHint ? ` (${options.urlHint})` : ''}`,
      ]);
    }
    rest = url[2]!.replace(/\/$/, '');
  }
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(.*))?$/.exec(rest);
  let host: string;
  let port: string | undefined;
  if (v6) {
    [host, port] = [v6[1]!, v6[2]];
  } else {
    const colon = rest.indexOf(':');
    [host, port] = colon < 0 ? [rest, undefined] : [rest.slice(0, colon), rest.slice(colon + 1)];
    if (port?.includes(':'))
      throw coreError('SVC_ADDRESS_INVALID', [
        addr,
        `has more than one ":"; write IPv6 hosts in brackets, e.g. [::1]:${options.defaultPort ?? 'port'}`,
      ]);
  }
  if (host === '' || /[\s/@[\]]/.test(host))
    throw coreError('SVC_ADDRESS_INVALID', [addr, `has no valid host; write ${example}`]);
  if (port === undefined) {
    if (options.defaultPort === undefined)
      throw coreError('SVC_ADDRESS_INVALID', [addr, `has no port; write ${example}`]);
    return scheme
      ? { host, port: options.defaultPort, scheme }
      : { host, port: options.defaultPort };
  }
  const n = Number(port);
  if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65535)
    throw coreError('SVC_ADDRESS_INVALID', [
      addr,
      `has an invalid port "${port}" (1-65535); write ${example}`,
    ]);
  return scheme ? { host, port: n, scheme } : { host, port: n };
}

/**
 * A connector's `addr` option: a string, `defaultAddr` when absent, checked with
 * `parseHostPort(options)` and then `check` (e.g. a port the driver does not speak) when boot.yaml
 * is loaded, so a bad address is a config error at its path.
 */
export function hostPortSchema(
  defaultAddr: string,
  options: HostPortOptions = {},
  /** A problem with the address parsed, as a message or a message with its stable code. */
  check?: (parsed: HostPort) => string | { message: string; code: string } | undefined,
) {
  return z
    .string()
    .min(1)
    .default(defaultAddr)
    .superRefine((addr, ctx) => {
      let parsed: HostPort;
      try {
        parsed = parseHostPort(addr, options);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return;
      }
      const problem = check?.(parsed);
      if (typeof problem === 'string') ctx.addIssue({ code: 'custom', message: problem });
      else if (problem)
        ctx.addIssue({ code: 'custom', message: problem.message, params: { code: problem.code } });
    });
}
