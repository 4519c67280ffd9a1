import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports for servers that take their port from the test (a child's PORT, a config file, a server
 * binary's flag), where the test cannot listen on port 0 and read the port back.
 *
 * A port found free is free only until someone binds it, so: (1) `freePort()` picks below the
 * kernel's ephemeral range, where no port-0 server and no outgoing connection of any process
 * lands (those take ports from that range, and tests make thousands of them), at random, and
 * never the same port twice in one process; (2) what binds it starts through `onFreePort`, which
 * starts it again on another port when the one picked was taken first (another test process
 * picked it too): its `start` rejects with an error that `isPortTaken` recognises (an
 * EADDRINUSE, or a `Child` that exited saying so).
 */

/** Ports picked from here: below the ephemeral range, below the Redis harness's (20000-55000). */
const LOW = 10_000;
const HIGH = Math.min(19_999, ephemeralLow() - 1);

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > LOW + 1000 ? n : 32_768;
  } catch {
    return 32_768;
  }
}

const handedOut = new Set<number>();

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, below the kernel's ephemeral range and not
 * handed out before in this process. Start what binds it with `onFreePort`; a test that can
 * listen on port 0 and read the port back should do that instead.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port found in ${LOW}-${HIGH} after 500 tries`);
}

/** The port a server was to bind was taken by another process before it could. */
export class PortTakenError extends Error {
  override readonly name = 'PortTakenError';
  readonly code = 'EADDRINUSE';
}

/** True when `err` says an address was in use (EADDRINUSE, in a code or a message). */
export function isPortTaken(err: unknown): boolean {
  if (err instanceof PortTakenError) return true;
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === 'EADDRINUSE') return true;
    if (typeof message === 'string' && /EADDRINUSE|address already in use/i.test(message))
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `start` with `count` free ports (freePort), and again with new ones while it rejects
 * because a port was taken first (isPortTaken), `attempts` times in all. Whatever else `start`
 * rejects with is thrown as it is.
 */
export async function onFreePorts<T>(
  count: number,
  start: (ports: number[]) => Promise<T>,
  { attempts = 5 }: { attempts?: number } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    try {
      return await start(ports);
    } catch (err) {
      if (attempt >= attempts || !isPortTaken(err)) throw err;
    }
  }
}

/** `onFreePorts` with one port. */
export function onFreePort<T>(
  start: (port: number) => Promise<T>,
  options: { attempts?: number } = {},
): Promise<T> {
  return onFreePorts(1, ([port]) => start(port!), options);
}

/** True when something accepts TCP connections at host:port. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
