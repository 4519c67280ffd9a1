import { expect, it } from 'vitest';
import { onTracedClient, registerTracedClient, type TracedClient } from './traced-clients.js';

it('gives a listener the clients announced before and after it subscribed, each module once', () => {
  const redis = class Redis {};
  const pg = { Client: class Client {} };
  registerTracedClient('ioredis', redis);
  registerTracedClient('ioredis', redis); // the same module twice: announced once
  const seen: TracedClient[] = [];
  onTracedClient((c) => seen.push(c));
  expect(seen).toEqual([{ driver: 'ioredis', moduleExports: redis }]);
  registerTracedClient('pg', pg);
  const other = class Redis {};
  registerTracedClient('ioredis', other); // another copy of the driver: patched too
  expect(seen).toEqual([
    { driver: 'ioredis', moduleExports: redis },
    { driver: 'pg', moduleExports: pg },
    { driver: 'ioredis', moduleExports: other },
  ]);
});
