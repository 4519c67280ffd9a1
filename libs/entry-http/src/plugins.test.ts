import { boot, ConfigError } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { httpEntry, httpPlugin } from './index.js';

describe('httpPlugin passed to boot({ plugins })', () => {
  it('boots an httpserver entry; a key of a kind left out names the installed package that provides it', async () => {
    const app = await boot({
      plugins: [httpPlugin],
      configText: 'httpserver:\n  - name: web\n    port: 0\n',
      env: {},
      argv: [],
    });
    expect(httpEntry(app, 'web').name).toBe('web');

    const err = await boot({
      plugins: [httpPlugin],
      configText: 'kvstore:\n  - name: redis\n',
      env: {},
      argv: [],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues[0]!.message).toContain("add `import '@svcboot/entry-kv';`");
  });
});
