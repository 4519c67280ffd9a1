import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { isListening, plainEnv, onFreePorts, PortTakenError, run, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { GREETER_PB_PATH, GREETER_PB_TS } from './greeter-pb.js';

// The quick start of tools/cli/README.md, as a user types it in a clone after `npm install`:
// `npx svc new` from the repository root (the @svcboot packages are not on the npm registry, so
// svc builds and packs them into the service's vendor/), then `npm install` and `npm start` in the
// new folder. The service answers Hello over gRPC, the REST gateway and the HTTP server, and a
// SIGTERM to the process group (what a terminal's Ctrl-C does, with SIGINT) stops all of it.
// The later tests use the same installed service: its own `npm test`, and the packed svc's
// `install` and `pb gen` inside it.

const repo = fileURLToPath(new URL('../../../..', import.meta.url));
// Installing on 2 shared cores can take a minute; the libs may need building first.
const BUDGET_MS = 240_000;

let root: string;
let dir: string;
let started: ChildProcess | undefined;
/**
 * The last test's `svc install`, started by the first one once the service is installed: it only
 * writes the service's .svc/bin (which neither tsc project includes), so its npm downloads run
 * while npm start and npm test compile.
 */
let toolsInstalled: ReturnType<typeof run> | undefined;

/**
 * As in a user's shell: not the PATH npm gives this workspace's scripts, whose node_modules/.bin
 * has the workspace's own buf (a devDependency), which svc pb gen would rightly prefer.
 */
const userEnv = (): NodeJS.ProcessEnv =>
  plainEnv({
    PATH: (process.env['PATH'] ?? '')
      .split(path.delimiter)
      .filter((d) => !d.includes(`${path.sep}node_modules${path.sep}.bin`))
      .join(path.delimiter),
  });

/** True while any process of the group led by `pid` is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  if (!existsSync(path.join(repo, 'node_modules', '.bin', 'svc'))) {
    throw new Error(
      `${repo}node_modules/.bin/svc is missing: run \`npm install\` at the repository root (it links tools/cli's bin)`,
    );
  }
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-quickstart-'));
  dir = path.join(root, 'hello');
});

afterAll(async () => {
  if (started?.pid !== undefined && groupAlive(started.pid)) process.kill(-started.pid, 'SIGKILL');
  // Not removed under a running install (when a test failed before the last one awaited it).
  await toolsInstalled?.catch(() => {});
  await rm(root, { recursive: true, force: true });
});

test(
  'npx svc new from the repository root, npm install, npm start: Hello over gRPC and REST; SIGTERM stops it',
  async () => {
    const made = await run(
      'npx',
      ['--no', 'svc', 'new', 'hello', '--with', 'grpc,httpserver', '--dir', root],
      { cwd: repo },
    );
    expect(made.stdout).toContain(
      `packing @svcboot/entry-core, @svcboot/entry-grpc, @svcboot/entry-http, @svcboot/cli from ${repo.replace(/\/$/, '')} into vendor/`,
    );
    expect(made.stdout).toContain(`created ${dir}\nnext:\n  cd ${dir}\n  npm install\n  npm start`);

    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      overrides: Record<string, string>;
    };
    expect(pkg.dependencies['@svcboot/entry-core']).toBe(
      'file:vendor/svcboot-entry-core-0.1.0.tgz',
    );
    expect(pkg.dependencies['@svcboot/entry-grpc']).toBe(
      'file:vendor/svcboot-entry-grpc-0.1.0.tgz',
    );
    expect(pkg.dependencies['@svcboot/entry-http']).toBe(
      'file:vendor/svcboot-entry-http-0.1.0.tgz',
    );
    expect(pkg.devDependencies['@svcboot/cli']).toBe('file:vendor/svcboot-cli-0.1.0.tgz');
    expect(pkg.overrides['@svcboot/entry-core']).toBe('$@svcboot/entry-core');
    expect((await readdir(path.join(dir, 'vendor'))).sort()).toEqual([
      'svcboot-cli-0.1.0.tgz',
      'svcboot-entry-core-0.1.0.tgz',
      'svcboot-entry-grpc-0.1.0.tgz',
      'svcboot-entry-http-0.1.0.tgz',
      // entry-grpc installs the grpc entry's packages (the protocols, the server core, the typed
      // API) and the core's generator: dependencies of it, packed and pinned as well.
      'svcboot-grpc-browser-0.1.0.tgz',
      'svcboot-grpc-gateway-0.1.0.tgz',
      'svcboot-grpc-server-0.1.0.tgz',
      'svcboot-grpc-typed-0.1.0.tgz',
      'svcboot-openapi-0.1.0.tgz',
    ]);
    // No staging folder is left beside it.
    expect(await readdir(root)).toEqual(['hello']);

    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: dir },
    );
    // One entry-core, the vendored one, shared by the service and the libs.
    const core = JSON.parse(
      await readFile(path.join(dir, 'node_modules/@svcboot/entry-core/package.json'), 'utf8'),
    ) as { version: string };
    expect(core.version).toBe('0.1.0');
    for (const lib of ['entry-grpc', 'entry-http'])
      expect(
        existsSync(
          path.join(dir, 'node_modules/@svcboot', lib, 'node_modules/@svcboot/entry-core'),
        ),
      ).toBe(false);
    const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    expect(lock.packages['node_modules/@svcboot/entry-core']?.resolved).toBe(
      'file:vendor/svcboot-entry-core-0.1.0.tgz',
    );
    toolsInstalled = run('npx', ['--no', 'svc', 'install', 'protobuf', 'protoc-gen-es'], {
      cwd: dir,
      env: userEnv(),
    });
    // Awaited (and its failure reported) by the last test.
    toolsInstalled.catch(() => {});

    const proto = loadPackageDefinition(
      loadSync('v1/greeter.proto', {
        includeDirs: [path.join(dir, 'api')],
        keepCase: true,
        defaults: true,
      }),
    ) as unknown as {
      api: { v1: { Greeter: ServiceClientConstructor } };
    };
    // Its own process group, as a shell would start it, so the signal reaches npm, sh and node.
    // Started again on new ports when one was taken before it listened (it exits saying
    // EADDRINUSE).
    let output = '';
    const exited = Symbol('exited');
    const { grpcPort, httpPort, service } = await onFreePorts(2, async ([grpcPort, httpPort]) => {
      output = '';
      started = spawn('npm', ['start'], {
        cwd: dir,
        env: plainEnv({ GRPC_PORT: String(grpcPort), HTTP_PORT: String(httpPort) }),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.stdout?.on('data', (b: Buffer) => (output += b.toString()));
      started.stderr?.on('data', (b: Buffer) => (output += b.toString()));
      const service = started;
      const client = new proto.api.v1.Greeter(
        `127.0.0.1:${grpcPort}`,
        credentials.createInsecure(),
      ) as unknown as {
        Hello(req: object, cb: (err: Error | null, res: unknown) => void): void;
        close(): void;
      };
      try {
        // npm start compiles first (prestart), then boots.
        const reply = await waitFor(
          'Hello over gRPC from npm start',
          () => {
            if (service.exitCode !== null) return exited;
            return new Promise<unknown>((resolve, reject) =>
              client.Hello({}, (err, res) => (err ? reject(err) : resolve(res))),
            );
          },
          { timeoutMs: 120_000, intervalMs: 200 },
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${output}`);
        });
        if (reply === exited) {
          const why = `npm start exited with ${service.exitCode}:\n${output}`;
          if (/EADDRINUSE|address already in use/i.test(output)) throw new PortTakenError(why);
          throw new Error(why);
        }
        expect(reply).toEqual({ message: 'Hello from hello' });
      } finally {
        client.close();
      }
      return { grpcPort: grpcPort!, httpPort: httpPort!, service };
    });
    for (const port of [grpcPort, httpPort]) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/hello`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ message: 'Hello from hello' });
    }

    process.kill(-service.pid!, 'SIGTERM');
    await waitFor(
      'every process of npm start to end after SIGTERM',
      () => !groupAlive(service.pid!),
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(output).toContain('Shutdown begins (SIGTERM)');
    expect(output).toContain('Shutdown complete');
    expect(await isListening(grpcPort)).toBe(false);
    expect(await isListening(httpPort)).toBe(false);
  },
  BUDGET_MS,
);

test(
  "the service's own npm test compiles it and calls Hello over gRPC, REST and HTTP",
  async () => {
    const tested = await run('npm', ['test'], { cwd: dir });
    const text = tested.stdout + tested.stderr;
    for (const name of [
      'Hello over gRPC',
      'Hello over the REST gateway',
      'Hello over the HTTP server',
    ])
      expect(text).toContain(name);
    expect(text).toMatch(/\bpass 3\b/);
    expect(text).toMatch(/\bfail 0\b/);
  },
  BUDGET_MS,
);

test(
  'the vendored svc runs from its dist in the service: svc install protoc and protoc-gen-es, then svc pb gen rewrites src/gen as svc new wrote it',
  async () => {
    const env = userEnv();
    // `npx --no svc install protobuf protoc-gen-es` in the service, started by the first test.
    expect(toolsInstalled, 'the first test installed the service').toBeDefined();
    const installed = await toolsInstalled!;
    expect(installed.stdout).toContain('installed .svc/bin/protoc');
    expect(installed.stdout).toContain('installed .svc/bin/protoc-gen-es');
    // svc new wrote the generated code of its greeter.proto (the service is typed from it before
    // any tool is installed): generating it again gives the same bytes.
    const generated = path.join(dir, GREETER_PB_PATH);
    expect(await readFile(generated, 'utf8')).toBe(GREETER_PB_TS);
    await rm(path.join(dir, 'src', 'gen'), { recursive: true });
    const gen = await run('npx', ['--no', 'svc', 'pb', 'gen'], { cwd: dir, env });
    expect(gen.stdout).toContain('generated code with protoc');
    expect(await readFile(generated, 'utf8')).toBe(GREETER_PB_TS);
    const doc = JSON.parse(
      await readFile(path.join(dir, 'gen', 'openapi', 'greeter.swagger.json'), 'utf8'),
    ) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(['/v1/hello']);
  },
  BUDGET_MS,
);
