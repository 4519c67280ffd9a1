import { describe, expect, it } from 'vitest';
import { boot, ConfigError } from '@svcboot/entry-core';
import {
  commandTimeoutMs,
  ioredisConfig,
  kvEntrySchema,
  kvMode,
  kvOptionsSchema,
  parseAddress,
  readRouting,
  retryBackoffMs,
} from './index.js';

describe('kvstore options', () => {
  it('has every documented default (README options table)', () => {
    const c = kvEntrySchema.parse({ name: 'redis', addrs: ['localhost:6379'] });
    expect(c).toEqual({
      name: 'redis',
      enabled: true,
      domain: '',
      description: '',
      loggerEntry: '',
      eventEntry: '',
      addrs: ['localhost:6379'],
      masterName: '',
      sentinelPass: '',
      maxRedirects: 3,
      readOnly: false,
      routeByLatency: false,
      routeRandomly: false,
      db: 0,
      user: '',
      pass: '',
      maxRetries: 3,
      minRetryBackoffMs: 8,
      maxRetryBackoffMs: 512,
      dialTimeoutMs: 5000,
      readTimeoutMs: 3000,
      writeTimeoutMs: 3000,
      poolFIFO: false,
      poolSize: 10,
      minIdleConn: 0,
      maxConnAgeMs: 0,
      poolTimeoutMs: 1300,
      idleTimeoutMs: 300_000,
      idleCheckFrequencyMs: 60_000,
      contextTimeoutEnabled: false,
      maxIdleConn: 0,
      connMaxIdleTimeMs: 0,
      connMaxLifetimeMs: 0,
      readinessCheck: true,
    });
  });

  it('accepts mansterName as masterName, and rejects the two disagreeing', () => {
    const c = kvEntrySchema.parse({
      name: 'r',
      addrs: ['a:26379', 'b:26379'],
      mansterName: 'mymaster',
    });
    expect(c.masterName).toBe('mymaster');
    expect('mansterName' in c).toBe(false);
    expect(kvMode(c)).toBe('sentinel');
    const bad = kvEntrySchema.safeParse({
      name: 'r',
      addrs: ['a'],
      mansterName: 'x',
      masterName: 'y',
    });
    expect(bad.success).toBe(false);
  });

  it('tells the modes apart by addrs and masterName', () => {
    expect(kvMode({ addrs: ['a:1'], masterName: '' })).toBe('single');
    expect(kvMode({ addrs: ['a:1', 'b:1'], masterName: '' })).toBe('cluster');
    expect(kvMode({ addrs: ['a:1'], masterName: 'm' })).toBe('sentinel');
  });

  it('rejects a db other than 0 for a cluster and a min backoff above the max', () => {
    expect(
      kvEntrySchema.safeParse({ name: 'r', addrs: ['a:1', 'b:1'], db: 2 }).error?.issues[0]
        ?.message,
    ).toMatch(/only database 0/);
    expect(
      kvEntrySchema.safeParse({ name: 'r', addrs: ['a:1'], minRetryBackoffMs: 600 }).success,
    ).toBe(false);
  });

  it('nested kvOptionsSchema has no name and requires enabled', () => {
    expect(kvOptionsSchema.safeParse({ addrs: ['a:1'] }).success).toBe(false);
    expect(kvOptionsSchema.safeParse({ enabled: true, name: 'x', addrs: ['a:1'] }).success).toBe(
      false,
    );
    expect(
      kvOptionsSchema.parse({ enabled: true, addrs: ['a:1'], mansterName: 'm' }).masterName,
    ).toBe('m');
  });

  it('reports misspelt options in boot.yaml with their path and a suggestion', async () => {
    const err = await boot({
      env: {},
      argv: [],
      configText: 'kvstore:\n  - name: redis\n    addrs: [localhost:6379]\n    dialTimeotMs: 10\n',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String((err as Error).message)).toMatch(
      /kvstore\[redis\]\.dialTimeotMs[\s\S]*dialTimeoutMs/,
    );
  });
});

describe('addresses in boot.yaml', () => {
  it('a URL is a config error with the entry path, and its password is not echoed', async () => {
    const err = await boot({
      env: {},
      argv: [],
      configText: 'kvstore:\n  - name: redis\n    addrs: ["redis://u:Pw-In-Url-77@h:6379"]\n',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(/kvstore\[redis\][\s\S]*is a URL; write host:port/);
    expect(message).not.toContain('Pw-In-Url-77');
  });
});

describe('mapping onto ioredis', () => {
  const base = kvEntrySchema.parse({
    name: 'r',
    addrs: ['127.0.0.1:7000'],
    user: 'u',
    pass: 'p',
    db: 4,
  });

  it('single: host, port, db, credentials, timeouts and retries', () => {
    const cfg = ioredisConfig(base);
    expect(cfg.mode).toBe('single');
    expect(cfg.options).toMatchObject({
      host: '127.0.0.1',
      port: 7000,
      db: 4,
      username: 'u',
      password: 'p',
      connectTimeout: 5000,
      commandTimeout: 6000,
      maxRetriesPerRequest: 3,
      lazyConnect: true,
    });
  });

  it('cluster: nodes, scaleReads by routing option, maxRedirections', () => {
    const c = kvEntrySchema.parse({
      name: 'r',
      addrs: ['h1:7000', 'h2:7001'],
      maxRedirects: 5,
      readOnly: true,
    });
    const cfg = ioredisConfig(c);
    if (cfg.mode !== 'cluster') throw new Error('expected cluster');
    expect(cfg.nodes).toEqual([
      { host: 'h1', port: 7000 },
      { host: 'h2', port: 7001 },
    ]);
    expect(cfg.options.maxRedirections).toBe(5);
    expect(cfg.options.scaleReads).toBe('slave');
    expect(readRouting({ readOnly: false, routeRandomly: true, routeByLatency: false })).toBe(
      'all',
    );
    expect(readRouting({ readOnly: false, routeRandomly: true, routeByLatency: true })).toBe(
      'latency',
    );
    expect(readRouting({ readOnly: false, routeRandomly: false, routeByLatency: false })).toBe(
      'master',
    );
  });

  it('sentinel: sentinels, master name, sentinel password, replica role for readOnly', () => {
    const c = kvEntrySchema.parse({
      name: 'r',
      addrs: ['s1:26379', 's2'],
      masterName: 'm',
      sentinelPass: 'sp',
      readOnly: true,
    });
    const cfg = ioredisConfig(c);
    expect(cfg.options).toMatchObject({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 6379 },
      ],
      name: 'm',
      sentinelPassword: 'sp',
      role: 'slave',
    });
  });

  it('command timeout is read + write, none when both are 0', () => {
    expect(commandTimeoutMs({ readTimeoutMs: 100, writeTimeoutMs: 50 })).toBe(150);
    expect(commandTimeoutMs({ readTimeoutMs: 0, writeTimeoutMs: 0 })).toBeUndefined();
  });

  it('backoff grows exponentially and stays within [min, max]', () => {
    for (let attempt = 1; attempt < 40; attempt++) {
      for (const r of [0, 0.5, 0.999]) {
        const d = retryBackoffMs(attempt, 8, 512, () => r);
        expect(d).toBeGreaterThanOrEqual(8);
        expect(d).toBeLessThanOrEqual(512);
      }
    }
    expect(retryBackoffMs(1, 8, 512, () => 1)).toBe(8);
    expect(retryBackoffMs(4, 8, 512, () => 1)).toBe(64);
    expect(retryBackoffMs(20, 8, 512, () => 1)).toBe(512);
  });

  it('parses addresses, with 6379 as the default port', () => {
    expect(parseAddress('redis.local:6380')).toEqual({ host: 'redis.local', port: 6380 });
    expect(parseAddress('[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(parseAddress('host')).toEqual({ host: 'host', port: 6379 });
    expect(() => parseAddress('host:abc')).toThrow(/invalid port/);
    expect(() => parseAddress('redis://h:1')).toThrow(/is a URL; write host:port/);
  });
});
