import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeScope, parseConsoleRecord } from '../event/encode.js';
import { EventFactory } from '../event/event-factory.js';
import { EventLogger } from '../event/event-logger.js';
import { OutputSet } from '../event/outputs.js';
import { CallChain, CallContext, type CallHeaders, type CallInfo } from './call.js';
import { LoggingMiddleware } from './logging.js';

const noHeaders: CallHeaders = { get: () => undefined, set: () => undefined };

const info = (operation: string): CallInfo => ({
  operation,
  remoteAddr: '127.0.0.1:5000',
  apiMethod: 'GET',
  apiPath: `/v1/${operation}`,
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
});

/** The request ids of a console file's records, in file order. */
function requestIds(text: string): string[] {
  return text
    .split('EOE\n')
    .filter((r) => r.trim() !== '')
    .map((r) => {
      const keys = Object.fromEntries(parseConsoleRecord(`${r}EOE\n`));
      return (JSON.parse(keys['ids']!) as { requestId: string }).requestId;
    });
}

describe('the logging middleware writing to a file', () => {
  let dir: string;
  let file: string;
  let outputs: OutputSet;
  let chain: CallChain;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-logging-'));
    file = path.join(dir, 'events.log');
    outputs = new OutputSet();
    const events = new EventFactory(
      new EventLogger('console', [outputs.get(file)]),
      makeScope('UTC', { appName: 'a', appVersion: '1', entryName: 'e', entryType: 'T' }, {}),
    );
    chain = new CallChain([new LoggingMiddleware(events)]);
  });

  afterEach(async () => {
    await outputs.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Begins `n` calls (all in flight together), named from `first` on. */
  function begin(n: number, first: number): CallContext[] {
    const calls: CallContext[] = [];
    for (let i = 0; i < n; i++) {
      const call = new CallContext(info(i % 2 ? 'Hello' : 'Bye'), {
        get: (name) => (name.toLowerCase() === 'x-request-id' ? `call-${first + i}` : undefined),
        set: noHeaders.set,
      });
      chain.before(call);
      calls.push(call);
    }
    return calls;
  }

  function end(calls: CallContext[]): void {
    for (const call of calls) {
      call.resCode = 'OK';
      chain.after(call);
    }
  }

  it('writes every record of a burst of calls that end together, in the order they ended, by the time the outputs close (shutdown)', async () => {
    const ids: string[] = [];
    // Three bursts: 500 calls ending in one turn (past the 64 KiB batch, so part of it is in
    // flight while the rest queues), 40 ending in reverse order, then one more turn's 25.
    const first = begin(500, 0);
    end(first);
    ids.push(...first.map((c) => c.requestId));
    await new Promise((r) => setImmediate(r));
    const second = begin(40, 500).reverse();
    end(second);
    ids.push(...second.map((c) => c.requestId));
    await new Promise((r) => setImmediate(r));
    const third = begin(25, 540);
    end(third);
    ids.push(...third.map((c) => c.requestId));
    expect(ids[0]).toBe('call-0');

    // What App#shutdown does with the outputs: nothing is waited for but the close itself.
    await outputs.close();
    expect(requestIds(await readFile(file, 'utf8'))).toEqual(ids);
  });

  it('writes a lone call ending just before the close (its window not yet over)', async () => {
    end(begin(1, 0));
    await outputs.close();
    expect(requestIds(await readFile(file, 'utf8'))).toEqual(['call-0']);
  });
});
