import http from 'node:http';
import net from 'node:net';
import { waitFor } from '@svcboot/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { IdleConnections } from './idle-connections.js';

const servers: http.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function start(): Promise<{
  port: number;
  connections: IdleConnections;
  serverSide: net.Socket[];
}> {
  const server = http.createServer((_req, res) => res.end('ok'));
  const connections = new IdleConnections(server);
  const serverSide: net.Socket[] = [];
  server.on('connection', (s: net.Socket) => serverSide.push(s));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, connections, serverSide };
}

function connect(
  port: number,
): Promise<{ socket: net.Socket; text: () => string; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      resolve({ socket, text: () => text, closed: () => closed }),
    );
    let text = '';
    let closed = false;
    socket.on('data', (b: Buffer) => (text += b.toString()));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    sockets.push(socket);
  });
}

describe('IdleConnections (which keep-alive connections shutdown may close)', () => {
  it('closes a connection idle for the given time, never one with a request on its way or in progress', async () => {
    const { port, connections, serverSide } = await start();
    const idle = await connect(port);
    idle.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the first answer', () => idle.text().includes('ok'));
    const partial = await connect(port);
    partial.socket.write('GET / HTTP/1.1\r\nHost: x\r\n'); // headers not finished
    await waitFor('both connections to be tracked', () => connections.size === 2);
    await waitFor(
      'the server to read the partial request',
      () => (serverSide[1]?.bytesRead ?? 0) > 0,
    );
    // Nothing is closed "now": neither has been idle for 60 s.
    expect(connections.closeIdle(60_000)).toBe(2);
    // Far in the future: the idle one goes, the one with a request on its way stays.
    const later = Date.now() + 120_000;
    await waitFor('the idle connection to be closed', () => {
      connections.closeIdle(60_000, later);
      return idle.closed();
    });
    expect(partial.closed()).toBe(false);
    expect(connections.size).toBe(1);
    // Once answered, it is idle too.
    partial.socket.write('\r\n');
    await waitFor('the second answer', () => partial.text().includes('ok'));
    await waitFor('the answered connection to be closed', () => {
      connections.closeIdle(60_000, Date.now() + 120_000);
      return partial.closed();
    });
    expect(connections.size).toBe(0);
  });
});
