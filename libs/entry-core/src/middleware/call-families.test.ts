import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { testCall } from '../test-support/test-call.js';
import type { CallInfo } from './call.js';
import { CallFamilies, type CallFamiliesOptions } from './call-families.js';

type L = 'client' | 'method';

const options = (client: string, shared: boolean): CallFamiliesOptions<L, 'code'> => ({
  started: { name: 'x_started_total', help: 'started' },
  handled: { name: 'x_handled_total', help: 'handled', codeLabel: 'code' },
  handling: { name: 'x_handling_seconds', help: 'handling', buckets: [0.1, 1] },
  labelNames: ['client', 'method'],
  shared,
  keyOf: ({ info: i }) => (i.apiMethod === 'SKIP' ? undefined : i.operation),
  labelsOf: ({ info: i }) => ({ client, method: i.apiMethod }),
});

/** One call through the families: started, then handled with `code` after `seconds`. */
function call(f: CallFamilies<L, 'code'>, info: Partial<CallInfo>, code: string, seconds: number) {
  const { call: c } = testCall(info);
  f.before(c);
  c.resCode = code;
  f.after(c, seconds);
}

describe('CallFamilies', () => {
  it('counts started and handled per label set and code, and observes the latency', async () => {
    const registry = new Registry();
    const f = new CallFamilies(registry, options('a', false));
    call(f, { operation: 'GET /x', apiMethod: 'GET' }, '200', 0.05);
    call(f, { operation: 'GET /x', apiMethod: 'GET' }, '200', 0.5);
    call(f, { operation: 'GET /x', apiMethod: 'GET' }, '503', 2);
    call(f, { operation: 'PUT /x', apiMethod: 'PUT' }, '200', 0.05);
    const text = await registry.metrics();
    expect(text).toContain('x_started_total{client="a",method="GET"} 3');
    expect(text).toContain('x_started_total{client="a",method="PUT"} 1');
    expect(text).toContain('x_handled_total{client="a",method="GET",code="200"} 2');
    expect(text).toContain('x_handled_total{client="a",method="GET",code="503"} 1');
    expect(text).toContain('x_handling_seconds_bucket{le="0.1",client="a",method="GET"} 1');
    expect(text).toContain('x_handling_seconds_bucket{le="1",client="a",method="GET"} 2');
    expect(text).toContain('x_handling_seconds_bucket{le="+Inf",client="a",method="GET"} 3');
    expect(text).toContain('x_handling_seconds_count{client="a",method="GET"} 3');
  });

  it('leaves out a call whose key is undefined', async () => {
    const registry = new Registry();
    const f = new CallFamilies(registry, options('a', false));
    call(f, { operation: 'SKIP /x', apiMethod: 'SKIP' }, '200', 0.05);
    expect(await registry.metrics()).not.toMatch(/^x_\w+\{/m);
  });

  it('shared: a second set of families on the registry adds its rows to the first', async () => {
    const registry = new Registry();
    const a = new CallFamilies(registry, options('a', true));
    const b = new CallFamilies(registry, options('b', true));
    call(a, { operation: 'GET /x', apiMethod: 'GET' }, '200', 0.05);
    call(b, { operation: 'GET /x', apiMethod: 'GET' }, '200', 0.05);
    const text = await registry.metrics();
    expect(text.match(/^# TYPE x_started_total counter$/gm)).toHaveLength(1);
    expect(text).toContain('x_started_total{client="a",method="GET"} 1');
    expect(text).toContain('x_started_total{client="b",method="GET"} 1');
  });

  it('not shared: a second registration of the same names is refused', () => {
    const registry = new Registry();
    new CallFamilies(registry, options('a', false));
    expect(() => new CallFamilies(registry, options('b', false))).toThrow(
      /already been registered/,
    );
  });

  it('keeps counting past the cached label sets', async () => {
    const registry = new Registry();
    const f = new CallFamilies(registry, options('a', false));
    for (let i = 0; i < 10_050; i++)
      call(f, { operation: `op${i}`, apiMethod: i < 10_000 ? 'GET' : 'POST' }, '200', 0.05);
    call(f, { operation: 'op10049', apiMethod: 'POST' }, '200', 0.05);
    const text = await registry.metrics();
    expect(text).toContain('x_started_total{client="a",method="GET"} 10000');
    expect(text).toContain('x_started_total{client="a",method="POST"} 51');
    expect(text).toContain('x_handled_total{client="a",method="POST",code="200"} 51');
  });
});
