import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endCall, startCall } from '../call/driver.js';
import { CallChain, CallContext, type CallHeaders, type CallInfo } from '../middleware/call.js';
import { LoadShedding } from './load-shedding.js';
import { loadSheddingSchema } from './schema.js';

/**
 * A closed loop of callers whose handlers wait on a real socket (a database in another process:
 * this one's CPU idle meanwhile), on the real clock: the calls waiting can grow by as many as
 * there are callers, faster than they end while the callers join, but they hold no CPU of this
 * process, and admission must not take them for an overload (demo-columnar's interleaved
 * requests were shed so). Counted, not timed: whatever the machine's load, nothing is shed.
 */

const headers: CallHeaders = { get: () => undefined, set: () => undefined };
const info: CallInfo = {
  operation: 'GET /v1/user',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/user',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: '',
};

/** The "database": another process that answers each line after 2 to 20 ms, one connection per caller. */
const DATABASE = `
const net = require('node:net');
const server = net.createServer((s) => {
  s.on('data', (d) => {
    for (const line of d.toString().split('\\n')) {
      if (line === '') continue;
      setTimeout(() => s.write(line + '\\n'), 2 + (Number(line) % 19));
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

let db: ChildProcess;
let port = 0;

beforeAll(async () => {
  db = spawn(process.execPath, ['-e', DATABASE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(db.stdout!, 'data')) as [Buffer];
  port = Number(chunk.toString().trim());
});

afterAll(() => {
  db.kill();
});

/** One caller's connection to the database: `ask` writes a line and resolves on its answer. */
async function connection(): Promise<{ ask: (n: number) => Promise<void>; socket: Socket }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.setNoDelay(true);
  const pending: Array<() => void> = [];
  let buffered = '';
  socket.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      buffered = buffered.slice(nl + 1);
      pending.shift()?.();
      nl = buffered.indexOf('\n');
    }
  });
  return {
    socket,
    ask: (n) =>
      new Promise<void>((resolve) => {
        pending.push(resolve);
        socket.write(`${n}\n`);
      }),
  };
}

describe('LoadShedding: I/O-bound callers on the real clock', () => {
  it('a closed loop of 12 callers whose handlers wait on a socket, joining one after another: nothing is shed', async () => {
    const ls = new LoadShedding(loadSheddingSchema.parse({}), 'api', new Registry());
    const chain = new CallChain([ls]);
    // demo-columnar's 12 interleaved requests (more callers would meet the backlog's own bounds,
    // MIN_BACKLOG_TO_SHED, beside busy processes).
    const callers = 12;
    const each = 60;
    const reasons: Array<string | undefined> = [];
    let ran = 0;
    const conns = await Promise.all(Array.from({ length: callers }, () => connection()));
    /** One call: admitted, its handler waits on the database, then it ends. */
    const call = (i: number, n: number): Promise<void> =>
      new Promise<void>((resolve) => {
        const c = new CallContext(info, headers);
        void startCall(chain, c, {
          proceed(cc) {
            ran++;
            void conns[i]!.ask(i + n).then(() => {
              endCall(cc, 'OK');
              resolve();
            });
          },
          refuse(cc, r) {
            reasons.push(r.source?.reason);
            endCall(cc, r.status);
            resolve();
          },
        });
      });
    const caller = async (i: number): Promise<void> => {
      for (let n = 0; n < each; n++) await call(i, n);
    };
    // The callers join one per turn of the loop: their first calls land across windows.
    const loops: Array<Promise<void>> = [];
    for (let i = 0; i < callers; i++) {
      loops.push(caller(i));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(loops);
    for (const c of conns) c.socket.destroy();
    await ls.close({ signal: AbortSignal.timeout(1000), timeoutMs: 1000 });
    expect(reasons).toEqual([]);
    expect(ran).toBe(callers * each);
  });
});
