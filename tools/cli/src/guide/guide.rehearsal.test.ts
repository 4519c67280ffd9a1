import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type GuideBlock, guideBlocks } from './blocks.js';

// docs/guide.md, executed as a reader types it, against the registry the release rehearsal
// published to (tools/scripts/release-rehearsal.sh runs this file once per CI run, with
// SVC_REHEARSAL_REGISTRY; vitest.config.ts leaves *.rehearsal.test.ts out of `npm test`).
// Its `sh guide` blocks run in bash, in order, in a folder outside the repository (the folder and
// the variables carried from block to block), with npm pointed at that registry and nothing else
// replaced: `npx @svcboot/cli`, `npm install`, `npx svc install`, `npm run typecheck` and
// `npm start` are the published ones. Its `file=` blocks are written, its `sh guide-serve` block
// is started as typed against the real PostgreSQL and Redis and stopped with SIGINT (Ctrl-C), and
// each `sh guide-call` curl is sent, its output compared with the ```json block after it.
// One difference from a reader's shell: the service's port. The guide's boot.yaml reads it from
// ${GRPC_PORT:-8080}; the serve block runs with GRPC_PORT set to a free port (another process on
// this machine may hold 8080), and the calls' localhost:8080 is sent to that port.

const repo = path.resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
const registry = process.env['SVC_REHEARSAL_REGISTRY'];

let root: string;
let service: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
  expect(
    registry,
    'SVC_REHEARSAL_REGISTRY: the registry the rehearsal published to (run tools/scripts/release-rehearsal.sh)',
  ).toMatch(/^https?:\/\//);
  // Outside the repository: no node_modules or package.json above it but the reader's own.
  root = await mkdtemp(path.join(process.env['SVC_REHEARSAL_DIR'] ?? os.tmpdir(), 'guide-'));
});

afterAll(async () => {
  if (service?.pid !== undefined && service.exitCode === null && service.signalCode === null) {
    try {
      process.kill(-service.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  if (root) await rm(root, { recursive: true, force: true });
});

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

interface Shell {
  cwd: string;
  state: string;
}

/** The environment of the reader's shell: this one, with npm pointed at the rehearsal's registry. */
function readerEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_registry: registry,
    npm_config_update_notifier: 'false',
    // npx asks before it installs a package (`Ok to proceed? (y)`): the reader says yes.
    npm_config_yes: 'true',
  };
}

/** Runs a script in bash in the shell's folder with its variables; keeps both for the next one. */
function bash(shell: Shell, script: string): Promise<{ code: number; out: string; err: string }> {
  // set -a: every variable a block sets is exported, so that `export -p` carries it to the next.
  const text = `set -a\n[ -f ${q(shell.state)} ] && . ${q(shell.state)}\ncd ${q(shell.cwd)}\nset -e\n${script}\nset +e\npwd > ${q(`${shell.state}.cwd`)}\nexport -p | grep -v ' \\(PWD\\|OLDPWD\\|SHLVL\\|_\\)=' > ${q(`${shell.state}.next`)}\nmv ${q(`${shell.state}.next`)} ${q(shell.state)}\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', text], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: readerEnv(),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', async (code) => {
      try {
        shell.cwd = (await readFile(`${shell.state}.cwd`, 'utf8')).trim();
      } catch {
        // the script failed before the end: the caller reports it
      }
      resolve({ code: code ?? -1, out, err });
    });
  });
}

async function varOf(shell: Shell, name: string): Promise<string | undefined> {
  const r = await bash(shell, `printf %s "\${${name}-}"`);
  return r.out === '' ? undefined : r.out;
}

/** The serve block as typed, in its own process group (a terminal's foreground job), on `port`. */
function startService(shell: Shell, block: GuideBlock, port: number): ChildProcess {
  // The shell's variables, then the block; a trap keeps bash waiting for npm start on Ctrl-C.
  const text = `set -a\n[ -f ${q(shell.state)} ] && . ${q(shell.state)}\nset +a\ncd ${q(shell.cwd)}\ntrap : INT TERM\n${block.body}`;
  output = '';
  const child = spawn('bash', ['-c', text], {
    env: { ...readerEnv(), GRPC_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  return child;
}

async function serve(shell: Shell, block: GuideBlock): Promise<number> {
  expect(block.body.trim(), 'the serve block runs npm start').toMatch(/(^|\s)npm start$/);
  // The port is freed before npm start binds it: when another process took it meanwhile, the
  // service exits with EADDRINUSE and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = startService(shell, block, port);
    service = child;
    const ready = await waitFor(
      'the bookstore to be ready (npm start builds it first)',
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) return 'exited';
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        return res?.status === 200 ? 'ready' : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${output}`);
    });
    if (ready === 'ready') return port;
    if (attempt < 3 && /EADDRINUSE/.test(output)) continue;
    throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}):\n${output}`);
  }
}

/** Ctrl-C: SIGINT to the serve block's process group; every process of it exits. */
async function stop(child: ChildProcess): Promise<void> {
  process.kill(-child.pid!, 'SIGINT');
  await waitFor(
    'every process of npm start to exit',
    () => {
      try {
        process.kill(-child.pid!, 0);
        return undefined;
      } catch {
        return true;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** The shown JSON with `$VAR`s put in from the shell; an unset one is taken from the actual. */
async function compare(shell: Shell, shown: string, actual: string): Promise<void> {
  const got = JSON.parse(actual) as unknown;
  const names = [...new Set([...shown.matchAll(/\$([A-Z_]+)/g)].map((m) => m[1]!))];
  let text = shown;
  for (const name of names) {
    let value = await varOf(shell, name);
    if (value === undefined) {
      // The first output naming it defines it: find it where the shown JSON has "$NAME".
      const at = JSON.parse(shown) as Record<string, unknown>;
      const key = Object.keys(at).find((k) => at[k] === `$${name}`);
      expect(key, `$${name} is a top-level value of ${shown}`).toBeDefined();
      value = String((got as Record<string, unknown>)[key!]);
      expect(value).toMatch(/^\S+$/);
      await bash(shell, `${name}=${q(value)}`);
    }
    text = text.replaceAll(`$${name}`, value);
  }
  expect(got).toEqual(JSON.parse(text));
}

test('docs/guide.md as a reader types it: from the registry to a typed bookstore on PostgreSQL and the cache, JWT on writes, OpenAPI', async () => {
  const blocks = await guideBlocks(path.join(repo, 'docs', 'guide.md'));
  const shell: Shell = { cwd: root, state: path.join(root, '.guide-state') };
  let port = 0;
  let files = 0;
  let calls = 0;
  const pending: number[] = [];
  const began = Date.now();
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    const at = Date.now();
    if (block.pending !== undefined) {
      console.log(`docs/guide.md line ${block.line}: not run (pending=${block.pending})`);
      pending.push(block.line);
    } else if (block.file !== undefined) {
      const target = path.join(shell.cwd, block.file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, block.body);
      files++;
    } else if (block.info === 'guide') {
      const r = await bash(shell, block.body);
      expect(r.code, `docs/guide.md line ${block.line}:\n${block.body}\n${r.out}\n${r.err}`).toBe(
        0,
      );
    } else if (block.info === 'guide-serve') {
      port = await serve(shell, block);
    } else if (block.info.startsWith('guide-call')) {
      expect(port, 'a call comes after the serve block').toBeGreaterThan(0);
      const cmd = block.body.trim().replaceAll('localhost:8080', `localhost:${port}`);
      const status = /status=(\d+)/.exec(block.info)?.[1];
      if (status !== undefined) {
        const r = await bash(shell, `${cmd} -o /dev/null -w '%{http_code}'`);
        expect(r.out, cmd).toBe(status);
      } else {
        const r = await bash(shell, cmd);
        expect(r.code, `${cmd}\n${r.err}`).toBe(0);
        const shown = blocks[i + 1];
        expect(shown?.lang, `a json block follows ${cmd}`).toBe('json');
        await compare(shell, shown!.body, r.out);
        i++;
      }
      calls++;
    } else {
      throw new Error(
        `docs/guide.md line ${block.line}: a ${block.lang} block that follows no call`,
      );
    }
    if (block.file === undefined && block.pending === undefined)
      console.log(
        `docs/guide.md line ${block.line} (${block.info}): ${((Date.now() - at) / 1000).toFixed(1)} s`,
      );
  }
  console.log(
    `docs/guide.md: ${blocks.length - pending.length} blocks in ${((Date.now() - began) / 1000).toFixed(0)} s` +
      (pending.length > 0 ? `; not run (pending=): lines ${pending.join(', ')}` : ''),
  );
  // What the guide is made of; a block whose info string the test does not know fails above.
  expect(files).toBe(4);
  expect(calls).toBe(7);
  expect(service?.exitCode, `the service is still up:\n${output}`).toBeNull();
  await stop(service!);
  expect(output).toMatch(/Shutdown complete/);
}, 900_000);
