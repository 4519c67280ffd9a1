import { describe, expect, it } from 'vitest';
import { encodeConsole, encodeJson, makeScope, parseConsoleRecord, RECORD_KEYS } from './encode.js';
import { Event } from './event.js';

const scope = makeScope(
  'UTC',
  { appName: 'a', appVersion: '1', entryName: 'e', entryType: 'T' },
  { arch: 'x64', domain: '*' },
);

function sample(withError: boolean): Event {
  const e = new Event('/api.v1.Greeter/Hello');
  e.eventId = e.requestId = 'id-1';
  e.remoteAddr = '127.0.0.1:5000';
  e.addPayload('apiMethod', 'POST').addPair('user', 'u1').setCounter('rows', 3).incCounter('rows');
  e.startTimer('db').endTimer('db');
  if (withError) e.setError(new Error('first line\nsecond line'));
  return e.finish('OK');
}

describe('event records', () => {
  it('console encoding parses back into exactly the record key order (ARCHITECTURE.md §5.1)', () => {
    const keys = parseConsoleRecord(encodeConsole(sample(false), scope)).map(([k]) => k);
    expect(keys).toEqual(RECORD_KEYS.filter((k) => k !== 'error'));
  });

  it('puts error after payloads and keeps a multi-line error on one line', () => {
    const text = encodeConsole(sample(true), scope);
    const pairs = parseConsoleRecord(text);
    expect(pairs.map(([k]) => k)).toEqual([...RECORD_KEYS]);
    expect(Object.fromEntries(pairs)['error']).toBe('first line\\nsecond line');
    expect(text.split('\n')[0]).toBe('-'.repeat(72));
    expect(text.endsWith('\nEOE\n')).toBe(true);
  });

  it('json encoding writes one line with the same keys and no duplicates', () => {
    const line = encodeJson(sample(true), scope);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trimEnd().includes('\n')).toBe(false);
    const keys = [...line.matchAll(/"([A-Za-z]+)":/g)].map((m) => m[1]);
    const topLevel = Object.keys(JSON.parse(line) as object);
    expect(topLevel).toEqual([...RECORD_KEYS]);
    // No key repeated at the top level of the raw text (JSON.parse would hide it).
    for (const k of RECORD_KEYS) expect(keys.filter((x) => x === k).length).toBe(1);
    const rec = JSON.parse(line) as Record<string, unknown>;
    expect(rec['ids']).toEqual({ eventId: 'id-1', requestId: 'id-1' });
    expect(rec['counters']).toEqual({ rows: 4 });
    expect(rec['pairs']).toEqual({ user: 'u1' });
    expect(typeof (rec['timing'] as Record<string, number>)['db']).toBe('number');
  });

  it('console records in a row keep their own operation, result code, ids and added parts', () => {
    const plain = (op: string, code: string, id: string, requestId: string): Event => {
      const e = new Event(op);
      e.eventId = id;
      e.requestId = requestId;
      e.remoteAddr = '10.0.0.1:1';
      return e.finish(code);
    };
    const records = [
      plain('/a.S/M', 'OK', 'id-1', 'id-1'),
      plain('/a.S/M', 'OK', 'id-2', 'id-2'),
      plain('/a.S/N', 'OK', 'id-3', 'other "id"'),
      plain('/a.S/N', 'NotFound', 'id-4', ''),
      sample(true),
      plain('/a.S/N', 'NotFound', 'id-5', 'id-5'),
    ].map((e) => Object.fromEntries(parseConsoleRecord(encodeConsole(e, scope))));
    expect(records.map((r) => [r['operation'], r['resCode'], r['eventStatus']])).toEqual([
      ['/a.S/M', 'OK', 'Ended'],
      ['/a.S/M', 'OK', 'Ended'],
      ['/a.S/N', 'OK', 'Ended'],
      ['/a.S/N', 'NotFound', 'Ended'],
      ['/api.v1.Greeter/Hello', 'OK', 'Ended'],
      ['/a.S/N', 'NotFound', 'Ended'],
    ]);
    expect(records.map((r) => JSON.parse(r['ids']!) as unknown)).toEqual([
      { eventId: 'id-1', requestId: 'id-1' },
      { eventId: 'id-2', requestId: 'id-2' },
      { eventId: 'id-3', requestId: 'other "id"' },
      { eventId: 'id-4' },
      { eventId: 'id-1', requestId: 'id-1' },
      { eventId: 'id-5', requestId: 'id-5' },
    ]);
    expect(records.map((r) => [r['counters'], r['pairs'], r['error']])).toEqual([
      ['{}', '{}', undefined],
      ['{}', '{}', undefined],
      ['{}', '{}', undefined],
      ['{}', '{}', undefined],
      ['{"rows":4}', '{"user":"u1"}', 'first line\\nsecond line'],
      ['{}', '{}', undefined],
    ]);
  });
  it("writes each record's own payloads, records in a row with the same members and with others alike", () => {
    const payloadsOf = (pre: string, added?: Record<string, unknown>): string => {
      const e = new Event('/api.v1.Greeter/Hello');
      e.eventId = e.requestId = 'id-1';
      e.payloadsJson = pre;
      if (added) for (const [k, v] of Object.entries(added)) e.addPayload(k, v);
      return Object.fromEntries(parseConsoleRecord(encodeConsole(e.finish('OK'), scope)))[
        'payloads'
      ]!;
    };
    const a = '"apiMethod":"POST"';
    expect(payloadsOf(a)).toBe('{"apiMethod":"POST"}');
    expect(payloadsOf(a)).toBe('{"apiMethod":"POST"}');
    expect(payloadsOf('"apiMethod":"GET"')).toBe('{"apiMethod":"GET"}');
    expect(payloadsOf('"apiMethod":"GET"', { n: 1 })).toBe('{"apiMethod":"GET","n":1}');
    expect(payloadsOf('')).toBe('{}');
    expect(payloadsOf('', { n: 2 })).toBe('{"n":2}');
    expect(payloadsOf(a)).toBe('{"apiMethod":"POST"}');
  });
});
