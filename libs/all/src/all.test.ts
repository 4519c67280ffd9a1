import { boot, defaultRegistry } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { allMiddlewares, allPlugins } from './index.js';

describe('@svcboot/all', () => {
  it('registers every entry kind and middleware package on import', async () => {
    expect(allPlugins.map((p) => p.key).sort()).toEqual([
      'cache',
      'columnardb',
      'grpc',
      'grpcclient',
      'httpclient',
      'httpserver',
      'kvstore',
      'relationaldb',
    ]);
    for (const p of allPlugins) expect(defaultRegistry.get(p.key)).toBe(p);
    expect(allMiddlewares.map((m) => m.key)).toEqual(['trace', 'jwt']);
    // A boot.yaml naming every kind and both middleware packages' keys boots without a plugin list.
    const app = await boot({
      configText: [
        'grpc: [{ name: g, port: 0, middleware: { trace: { enabled: false }, jwt: { enabled: false } } }]',
        'httpserver: [{ name: h, port: 0, middleware: { trace: { enabled: false } } }]',
        'kvstore: [{ name: kv, enabled: false, addrs: ["127.0.0.1:6379"] }]',
        'cache: [{ name: c, enabled: false, local: { enabled: true } }]',
        'relationaldb: [{ name: pg, enabled: false, database: [{ name: app }] }]',
        'columnardb: [{ name: ch, enabled: false, database: [{ name: app }] }]',
        'grpcclient: [{ name: gc, target: "dns:///127.0.0.1:1" }]',
        'httpclient: [{ name: hc, baseUrl: "http://127.0.0.1:1" }]',
        '',
      ].join('\n'),
      env: {},
      argv: [],
    });
    expect(app.entries().map((e) => e.name)).toEqual(expect.arrayContaining(['g', 'h']));
  });
});
