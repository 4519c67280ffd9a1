import { describe, expect, it } from 'vitest';
import { boot, ConfigError } from '@svcboot/entry-core';
import { relationalDbEntry } from './index.js';
import { relationalDbSchema } from './schema.js';
import { parseParams } from './params.js';
import { inlineParameters } from './simple-protocol.js';
import { poolConfig } from './database.js';
import { bootText, scratch } from './test-support/pg.js';
import { relationalDbYaml } from './test-support/yaml.js';

describe('relationaldb options', () => {
  it('applies every documented default (README options table)', () => {
    const config = relationalDbSchema.parse({ name: 'sql', database: [{ name: 'app' }] });
    expect(config).toEqual({
      name: 'sql',
      enabled: false,
      domain: '*',
      description: '',
      loggerEntry: '',
      eventEntry: '',
      user: 'postgres',
      pass: '',
      addr: 'localhost:5432',
      database: [
        {
          name: 'app',
          autoCreate: false,
          dryRun: false,
          preferSimpleProtocol: false,
          params: ['sslmode=disable', 'TimeZone=Asia/Shanghai'],
        },
      ],
      logger: {
        entry: '',
        level: 'warn',
        encoding: 'console',
        outputPaths: ['stdout'],
        slowThresholdMs: 5000,
        ignoreRecordNotFoundError: false,
      },
      maxOpenConn: 10,
      maxIdleConn: 2,
      connMaxLifetimeMs: 0,
      connectTimeoutMs: 5000,
      readinessCheck: true,
      healthCheckIntervalMs: 5000,
    });
  });

  it('maps the pool options onto pg-pool', () => {
    const config = relationalDbSchema.parse({
      name: 'sql',
      addr: '[::1]:6543',
      user: 'svc',
      pass: 'pw',
      maxOpenConn: 7,
      maxIdleConn: 3,
      connMaxLifetimeMs: 1500,
      connectTimeoutMs: 250,
      database: [
        {
          name: 'app',
          params: [
            'sslmode=require',
            'application_name=svc',
            'search_path=a, b',
            'statement_timeout=5s',
          ],
        },
      ],
    });
    const pool = poolConfig(config, config.database[0]!);
    expect(pool).toMatchObject({
      host: '::1',
      port: 6543,
      user: 'svc',
      password: 'pw',
      database: 'app',
      ssl: { rejectUnauthorized: false },
      application_name: 'svc',
      options: '-c search_path=a,\\ b -c statement_timeout=5s',
      max: 7,
      min: 3,
      maxLifetimeSeconds: 2,
      connectionTimeoutMillis: 250,
    });
  });

  it('rejects unknown params, bad sslmodes and a maxIdleConn above maxOpenConn', () => {
    expect(() => parseParams(['sslmode=disable', 'sslcert=/x'])).toThrow(
      /unknown param "sslcert".*known params: sslmode, TimeZone/,
    );
    expect(() => parseParams(['sslmode=prefer'])).toThrow(
      /sslmode must be one of disable, require, verify-ca, verify-full/,
    );
    expect(() => parseParams(['TimeZone'])).toThrow(/"TimeZone" is not key=value/);
    expect(parseParams(['', 'timezone=UTC']).options).toBe('-c TimeZone=UTC');
    expect(parseParams(['sslmode=verify-full']).ssl).toEqual({ rejectUnauthorized: true });
    const result = relationalDbSchema.safeParse({
      name: 'sql',
      maxOpenConn: 2,
      maxIdleConn: 3,
      database: [{ name: 'a' }, { name: 'a' }],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toEqual([
      'database "a" is listed twice',
      'maxIdleConn (3) is larger than maxOpenConn (2)',
    ]);
  });

  it('reports a bad param or addr as a config error of the entry at boot', async () => {
    const tmp = await scratch();
    try {
      const bad = bootText(
        tmp.dir,
        relationalDbYaml({ database: [{ name: 'x', params: ['sslmode=disable', 'foo=bar'] }] }),
      );
      await expect(bad).rejects.toBeInstanceOf(ConfigError);
      await expect(bad).rejects.toThrow(/relationaldb\[sql\].*unknown param "foo"/);
      await expect(
        bootText(tmp.dir, relationalDbYaml({ addr: 'db:port', database: [{ name: 'x' }] })),
      ).rejects.toThrow(/relationaldb\[sql\]\.addr.*address "db:port" has an invalid port "port"/);
      await expect(
        bootText(tmp.dir, relationalDbYaml({ database: [{ name: 'x', autocreate: true }] })),
      ).rejects.toThrow(/autocreate.*did you mean "autoCreate"/s);
    } finally {
      await tmp.cleanup();
    }
  });
});

describe('domain', () => {
  it('defaults to *: the item for $DOMAIN wins, the unmarked one serves every other domain', async () => {
    const configText = [
      'relationaldb:',
      '  - { name: sql, enabled: true, description: everywhere, addr: "any-host:5432", database: [{ name: app }] }',
      '  - { name: sql, enabled: true, domain: prod, description: production, addr: "prod-host:5432", database: [{ name: app }] }',
    ].join('\n');
    for (const [domain, addr, description] of [
      ['prod', 'prod-host:5432', 'production'],
      ['dev', 'any-host:5432', 'everywhere'],
    ] as const) {
      const app = await boot({ configText, argv: [], env: { DOMAIN: domain } });
      const entry = relationalDbEntry(app, 'sql');
      expect([entry.config.addr, entry.config.domain, entry.description]).toEqual([
        addr,
        domain === 'prod' ? 'prod' : '*',
        description,
      ]);
      await app.shutdown();
    }
  });
});

describe('inlineParameters (preferSimpleProtocol)', () => {
  it('replaces placeholders with literals and leaves quoted text, comments and dollar quotes alone', () => {
    expect(
      inlineParameters('select $1, $2, $10', [1, "O'Brien", null, 4, 5, 6, 7, 8, 9, true]),
    ).toBe("select '1', 'O''Brien', 'true'");
    expect(
      inlineParameters(`select '$1', "$1", $$ $1 $$, $tag$ $1 $tag$ -- $1\n, $1 /* $1 */`, ['x']),
    ).toBe(`select '$1', "$1", $$ $1 $$, $tag$ $1 $tag$ -- $1\n, 'x' /* $1 */`);
    expect(inlineParameters("select E'\\'$1', $1", ['y'])).toBe("select E'\\'$1', 'y'");
    expect(inlineParameters('select $1', [Buffer.from([1, 255])])).toBe("select '\\x01ff'::bytea");
    expect(inlineParameters('select $1', [[1, 2]])).toBe('select \'{"1","2"}\'');
    expect(() => inlineParameters('select $2', [1])).toThrow(/refers to \$2 but has 1 parameters/);
  });
});
