import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Child, isListening, plainEnv, SOURCE_NODE_ARGS, startOnFreePort } from '@svcboot/testkit';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * Nothing of svc dev or its dashboard loads in a service: it lives in @svcboot/cli (a
 * devDependency of a service made by `svc new`), and svc dev talks to its services only through
 * their environment (SVC_SET, SVC_BOOT_CONFIG), their records files and their gRPC port. Checked
 * on demo-chain's users service started as its pod starts it, with a module hook that writes down
 * every module the service resolves.
 */

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chainDir = path.resolve(cliDir, '../../apps/demo-chain');
const root = path.join(cliDir, '.test-tmp', `isolation-${process.pid}-${Date.now()}`);
let service: Child | undefined;

afterAll(async () => {
  if (service && service.process.exitCode === null) {
    service.process.kill('SIGINT');
    await service.waitForExit(20_000).catch(() => service?.kill());
  }
  rmSync(root, { recursive: true, force: true });
});

describe('a service outside svc dev', () => {
  it('loads no module of svc dev, its dashboard or the CLI', async () => {
    mkdirSync(root, { recursive: true });
    const log = path.join(root, 'modules.txt');
    writeFileSync(
      path.join(root, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(file, r.url + '\\n');
  return r;
}
`,
    );
    writeFileSync(
      path.join(root, 'register.mjs'),
      `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url, { data: { file: ${JSON.stringify(log)} } });
`,
    );
    ({ child: service } = await startOnFreePort(
      (port) =>
        Child.start(
          process.execPath,
          [
            ...SOURCE_NODE_ARGS,
            '--import',
            pathToFileURL(path.join(root, 'register.mjs')).href,
            'src/main.ts',
            'users',
          ],
          { cwd: chainDir, env: plainEnv({ USERS_PORT: String(port) }) },
        ),
      { what: 'users to listen', ready: (_c, port) => isListening(port) },
    ));
    const modules = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    // The hook saw the service's own modules (so it would have seen the CLI's).
    expect(modules.some((m) => m.includes('/libs/entry-grpc/src/'))).toBe(true);
    expect(modules.some((m) => m.endsWith('/apps/demo-chain/src/services.ts'))).toBe(true);
    const cli = modules.filter((m) => m.includes('/tools/cli/') || m.includes('@svcboot/cli'));
    expect(cli).toEqual([]);
  }, 60_000);
});
