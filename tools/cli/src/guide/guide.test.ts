import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUF_VERSION, bufBinary, Child, startOnFreePort, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { findTool } from '../install/tools.js';
import { SOURCE_NODE_ARGS } from '../pb/test-support/served.js';
import { guideBlocks, type GuideBlock } from './blocks.js';

// docs/guide.md, executed: its `sh guide` blocks run in bash (in order, the folder and the
// variables carried from block to block), its `file=` blocks are written, its `sh guide-serve`
// block starts the service against the real PostgreSQL and Redis, and each `sh guide-call` curl
// is sent, its output compared with the ```json block after it.
//
// Where the test differs from a user's shell, on purpose (the shims below):
// - the project lives under tools/cli/.test-tmp, so the workspace's node_modules serve it:
//   `npm install` is a no-op (the packages it names are the workspace's), `svc new` gets
//   `--no-vendor` (no tarballs packed) and `svc` (a shell function, ahead of the PATH) runs from
//   this checkout's sources;
// - `svc pb vendor` copies the demo's google/api protos instead of downloading them (offline);
// - `svc install` links buf from the pinned copy the tests share (testkit's bufBinary(), the
//   version `svc install buf` installs; execute.test.ts checks that install) into .svc/bin and
//   installs the other tools it names as the guide says;
// - `npm run typecheck` runs the project's tsc with the workspace's source condition, and
//   `npm start` runs src/main.ts with tsx (the packages' dist may not be built), on a free port.

const cliDir = fileURLToPath(new URL('../..', import.meta.url));
const repo = path.resolve(cliDir, '..', '..');
const binTs = path.join(cliDir, 'src', 'bin.ts');
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const demoApi = path.join(repo, 'apps', 'demo-grpc', 'third-party', 'googleapis', 'google', 'api');

let root: string;
let service: ChildProcess | undefined;
let buf: string;

beforeAll(async () => {
  const parent = path.join(cliDir, '.test-tmp');
  await mkdir(parent, { recursive: true });
  root = await mkdtemp(path.join(parent, 'guide-'));
  expect(BUF_VERSION).toBe(findTool('buf')!.version);
  buf = await bufBinary();
});

afterAll(async () => {
  if (service && service.exitCode === null) service.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

function shims(): string {
  const node = [process.execPath, ...SOURCE_NODE_ARGS].map(q).join(' ');
  return `
set -a
svc() {
  case "$1 $2" in
    "pb vendor") mkdir -p third-party/googleapis/google && cp -r ${q(demoApi)} third-party/googleapis/google/api ;;
    install\\ *)
      shift
      local tools=()
      for t in "$@"; do
        if [ "$t" = buf ]; then mkdir -p .svc/bin && ln -sfn ${q(buf)} .svc/bin/buf; else tools+=("$t"); fi
      done
      [ \${#tools[@]} -eq 0 ] || ${node} ${q(binTs)} install "\${tools[@]}" ;;
    new\\ *) ${node} ${q(binTs)} "$@" --no-vendor --svcboot-version ^0.1.0 ;;
    *) ${node} ${q(binTs)} "$@" ;;
  esac
}
npm() {
  case "$1 $2" in
    install*) echo "guide test: npm $* served by the workspace's node_modules" ;;
    "run typecheck") ${q(process.execPath)} ${q(tsc)} -p tsconfig.json --noEmit --customConditions svcboot-source ;;
    *) echo "guide test: no shim for npm $*" >&2; return 1 ;;
  esac
}
`;
}

interface Shell {
  cwd: string;
  state: string;
}

/** Runs a script in bash in the shell's folder with its variables; keeps both for the next one. */
function bash(shell: Shell, script: string): Promise<{ code: number; out: string; err: string }> {
  const text = `${shims()}\n[ -f ${q(shell.state)} ] && . ${q(shell.state)}\ncd ${q(shell.cwd)}\nset -e\n${script}\nset +e\npwd > ${q(`${shell.state}.cwd`)}\nexport -p | grep -v ' \\(PWD\\|OLDPWD\\|SHLVL\\|_\\)=' > ${q(`${shell.state}.next`)}\nmv ${q(`${shell.state}.next`)} ${q(shell.state)}\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', text], { stdio: ['ignore', 'pipe', 'pipe'] });
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

async function serve(shell: Shell, block: GuideBlock): Promise<number> {
  const m = /^((?:\w+=\S+\s+)*)npm start$/.exec(block.body.trim());
  expect(m, `the serve block is "VAR=value ... npm start": ${block.body}`).not.toBeNull();
  const env: Record<string, string> = {};
  for (const a of m![1]!.trim().split(/\s+/).filter(Boolean)) {
    const eq = a.indexOf('=');
    env[a.slice(0, eq)] = a.slice(eq + 1);
  }
  const { port } = await startOnFreePort(
    (port) => {
      const child = Child.start(process.execPath, [...SOURCE_NODE_ARGS, 'src/main.ts'], {
        cwd: shell.cwd,
        env: { ...process.env, ...env, GRPC_PORT: String(port) },
      });
      service = child.process;
      return child;
    },
    {
      what: 'the bookstore to be ready',
      ready: async (_child, port) =>
        (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      timeoutMs: 60_000,
    },
  );
  return port;
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

test('docs/guide.md runs: scaffold, typed bookstore on PostgreSQL and the cache, JWT on writes, OpenAPI', async () => {
  const blocks = await guideBlocks(path.join(repo, 'docs', 'guide.md'));
  const shell: Shell = { cwd: root, state: path.join(root, '.guide-state') };
  let port = 0;
  let files = 0;
  let calls = 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (block.file !== undefined) {
      const target = path.join(shell.cwd, block.file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, block.body);
      files++;
    } else if (block.info === 'guide') {
      const r = await bash(shell, block.body);
      expect(r.code, `${block.body}\n${r.out}\n${r.err}`).toBe(0);
    } else if (block.info === 'guide-serve') {
      port = await serve(shell, block);
    } else if (block.info.startsWith('guide-call')) {
      expect(port, 'a call comes after the serve block').toBeGreaterThan(0);
      const cmd = block.body.trim().replaceAll('localhost:8080', `127.0.0.1:${port}`);
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
  }
  // What the guide is made of; a block whose info string the test does not know fails above.
  expect(files).toBe(4);
  expect(calls).toBe(7);
  expect(service?.exitCode).toBeNull();
  service?.kill('SIGTERM');
  await waitFor('the service to exit', () => service?.exitCode !== null, { timeoutMs: 30_000 });
  expect(service?.exitCode).toBe(0);
}, 300_000);
