import net from 'node:net';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { ListenerQuiet } from './quiet-listener.js';

const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function start(): Promise<{ port: number; quiet: ListenerQuiet; accepted: () => number }> {
  const server = net.createServer();
  let accepted = 0;
  server.on('connection', () => accepted++);
  const quiet = new ListenerQuiet(server);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, quiet, accepted: () => accepted };
}

function connect(port: number): void {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  sockets.push(s);
}

describe('ListenerQuiet', () => {
  it('waits, keeping connections (closesConnections false), until the listener has accepted nothing for quietMs, then lets them close', async () => {
    const { port, quiet, accepted } = await start();
    connect(port);
    await waitFor('the connection to be accepted', () => accepted() === 1);
    expect(quiet.closesConnections).toBe(true);
    let settled = false;
    const settling = quiet.settle({ quietMs: 300, maxMs: 60_000 }).then(() => (settled = true));
    expect(quiet.closesConnections).toBe(false);
    // A new connection while it waits: the quiet starts over from it.
    connect(port);
    await waitFor('the second connection to be accepted', () => accepted() === 2);
    expect(settled).toBe(false);
    await settling;
    expect(quiet.closesConnections).toBe(true);
  });

  it('gives up at maxMs while connections keep coming, and at once when its signal aborts', async () => {
    const { port, quiet } = await start();
    const flood = setInterval(() => connect(port), 10);
    try {
      connect(port);
      await quiet.settle({ quietMs: 60_000, maxMs: 200 });
      expect(quiet.closesConnections).toBe(true);
      const ac = new AbortController();
      const settling = quiet.settle({ quietMs: 60_000, maxMs: 60_000, signal: ac.signal });
      ac.abort();
      await settling;
      expect(quiet.closesConnections).toBe(true);
    } finally {
      clearInterval(flood);
    }
  });

  it('does not wait when nothing was accepted lately', async () => {
    const { quiet } = await start();
    await quiet.settle({ quietMs: 60_000, maxMs: 60_000 });
    expect(quiet.closesConnections).toBe(true);
  });
});
