import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  databaseItemSchema,
  databaseListSchema,
  hostPortSchema,
  parseHostPort,
  parseParams,
  StatementLogger,
  type Statement,
} from './index.js';

describe('parseHostPort', () => {
  it('reads host:port, [v6]:port and a bare host with the default port', () => {
    expect(parseHostPort('db.local:6543')).toEqual({ host: 'db.local', port: 6543 });
    expect(parseHostPort('[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(parseHostPort(' host ', { defaultPort: 5432 })).toEqual({ host: 'host', port: 5432 });
    expect(parseHostPort('[fe80::1]', { defaultPort: 6379 })).toEqual({
      host: 'fe80::1',
      port: 6379,
    });
  });

  it('takes a scheme only where the connector allows one', () => {
    expect(parseHostPort('https://ch:8443/', { schemes: ['http', 'https'] })).toEqual({
      host: 'ch',
      port: 8443,
      scheme: 'https',
    });
    expect(() =>
      parseHostPort('redis://h:1', {
        defaultPort: 6379,
        urlHint: 'credentials go in user and pass',
      }),
    ).toThrow('address "redis://h:1" is a URL; write host:port (credentials go in user and pass)');
  });

  it('says what is wrong: port, missing port, unbracketed IPv6, empty host', () => {
    expect(() => parseHostPort('h:abc')).toThrow(
      'address "h:abc" has an invalid port "abc" (1-65535); write host:port',
    );
    expect(() => parseHostPort('h:70000', { defaultPort: 1 })).toThrow(/invalid port "70000"/);
    expect(() => parseHostPort('h')).toThrow('address "h" has no port; write host:port');
    expect(() => parseHostPort('::1:5432', { defaultPort: 5432 })).toThrow(
      /more than one ":"; write IPv6 hosts in brackets, e.g. \[::1\]:5432/,
    );
    expect(() => parseHostPort(':5432')).toThrow(/has no valid host/);
  });
});

describe('hostPortSchema', () => {
  it('defaults, and reports a bad address or what the connector refuses as issues', () => {
    const addr = hostPortSchema('localhost:5432', { defaultPort: 5432 }, ({ port }) =>
      port === 9000 ? 'port 9000 is not spoken here' : undefined,
    );
    expect(addr.parse(undefined)).toBe('localhost:5432');
    expect(addr.parse('db')).toBe('db');
    expect(addr.safeParse('db:x').error?.issues[0]?.message).toBe(
      'address "db:x" has an invalid port "x" (1-65535); write host:port',
    );
    expect(addr.safeParse('db:9000').error?.issues[0]?.message).toBe(
      'port 9000 is not spoken here',
    );
  });
});

describe('parseParams', () => {
  it('splits key=value, trims, skips empty items and keeps = in values', () => {
    expect(parseParams(['', ' a = 1 ', 'b=x=y'])).toEqual([
      { key: 'a', value: '1', item: 'a = 1' },
      { key: 'b', value: 'x=y', item: 'b=x=y' },
    ]);
  });
  it('names an item that is not key=value', () => {
    expect(() => parseParams(['TimeZone'])).toThrow('param "TimeZone" is not key=value');
    expect(() => parseParams(['=1'])).toThrow('param "=1" is not key=value');
  });
});

describe('database schema', () => {
  const item = databaseItemSchema({
    defaultParams: ['tz=UTC'],
    checkParam: (p) => (p.key === 'tz' ? undefined : `unknown param "${p.key}"`),
    checkName: (n) => (n.includes('`') ? 'no backticks' : undefined),
    extra: { fast: z.boolean().default(false) },
  });
  const entry = z.strictObject({ database: databaseListSchema(item) });

  it('applies defaults, including the connector’s own options', () => {
    expect(entry.parse({ database: [{ name: 'a' }] })).toEqual({
      database: [{ name: 'a', autoCreate: false, dryRun: false, params: ['tz=UTC'], fast: false }],
    });
  });

  it('reports bad params, bad names, a name listed twice and an empty list, each at its path', () => {
    const bad = entry.safeParse({
      database: [{ name: 'a', params: ['x=1', 'nonsense'] }, { name: 'a' }, { name: 'b`' }],
    });
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['database.0.params', 'param "nonsense" is not key=value'],
      ['database.2.name', 'no backticks'],
      ['database.1.name', 'database "a" is listed twice'],
    ]);
    expect(
      entry.safeParse({ database: [{ name: 'a', params: ['y=2'] }] }).error?.issues[0]?.message,
    ).toBe('unknown param "y"');
    expect(entry.safeParse({ database: [] }).error?.issues[0]?.message).toBe(
      'list at least one database under database:',
    );
  });
});

describe('StatementLogger', () => {
  function capture(
    level: 'info' | 'warn' | 'error' | 'silent',
    slowThresholdMs = 100,
    ignoreRecordNotFoundError = false,
  ) {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info', base: undefined, timestamp: false }, stream);
    const log = new StatementLogger(
      logger,
      { level, slowThresholdMs, ignoreRecordNotFoundError },
      (t) => t.replaceAll('s3cret', '******'),
    );
    return { log, lines };
  }
  const bound: Statement = {
    database: 'main',
    text: "SELECT 'v1'",
    shape: 'SELECT {p0:String}',
    values: { p0: 'v1' },
  };
  const placeholders: Statement = { database: 'main', text: 'select $1', values: [7] };

  it('info: one record per statement, with duration, rows and values', () => {
    const { log, lines } = capture('info');
    log.executed(placeholders, 1.23456, 1);
    log.executed(bound, 150);
    expect(lines).toEqual([
      {
        level: 30,
        database: 'main',
        durationMs: 1.235,
        rows: 1,
        values: [7],
        msg: '[1.235ms] select $1',
      },
      {
        level: 40,
        database: 'main',
        durationMs: 150,
        values: { p0: 'v1' },
        slowThresholdMs: 100,
        msg: "SLOW SQL >= 100ms [150ms] SELECT 'v1'",
      },
    ]);
  });

  it('warn (the default): slow statements and dry runs, never values', () => {
    const { log, lines } = capture('warn');
    log.executed(bound, 5);
    log.executed(bound, 100);
    log.dryRun(bound);
    expect(lines).toEqual([
      {
        level: 40,
        database: 'main',
        durationMs: 100,
        slowThresholdMs: 100,
        msg: 'SLOW SQL >= 100ms [100ms] SELECT {p0:String}',
      },
      { level: 40, database: 'main', dryRun: true, msg: 'dry run, not sent: SELECT {p0:String}' },
    ]);
  });

  it('error: failures with the redacted message and the driver code; record not found unless ignored', () => {
    const { log, lines } = capture('error', 0);
    log.executed(bound, 10_000);
    log.failed(
      placeholders,
      2,
      Object.assign(new Error('password s3cret rejected'), { code: '28P01' }),
    );
    log.recordNotFound('main', 'no result', 'select 1');
    expect(lines).toEqual([
      {
        level: 50,
        database: 'main',
        durationMs: 2,
        error: 'password ****** rejected',
        code: '28P01',
        msg: '[2ms] select $1: password ****** rejected',
      },
      { level: 50, database: 'main', error: 'no result', msg: 'record not found: select 1' },
    ]);
    const ignoring = capture('error', 0, true);
    ignoring.log.recordNotFound('main', 'no result');
    expect(ignoring.lines).toEqual([]);
  });

  it('silent: nothing', () => {
    const { log, lines } = capture('silent', 1);
    log.executed(bound, 50);
    log.failed(bound, 1, new Error('x'));
    log.dryRun(bound);
    expect(log.silent).toBe(true);
    expect(lines).toEqual([]);
  });
});
