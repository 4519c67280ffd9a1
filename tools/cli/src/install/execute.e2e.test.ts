import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { main } from '../main.js';
import { executePlan } from './execute.js';
import { detectMachine } from './machine.js';
import { planTool } from './plan.js';
import { findTool } from './tools.js';

const exec = promisify(execFile);
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-install-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every path under dir, relative, for "nothing was left behind" checks. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push(path.relative(dir, p));
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out.sort();
}

async function svc(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    args,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

test('buf and protoc install from npm into a folder and run from there', async () => {
  const dir = path.join(root, 'real', 'bin');
  const r = await svc(['install', 'buf', 'protobuf', '--dir', dir]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toContain(`export PATH="${dir}:$PATH"`);

  const buf = await exec(path.join(dir, 'buf'), ['--version']);
  expect(buf.stdout.trim()).toBe(findTool('buf')!.version);
  const protoc = await exec(path.join(dir, 'protoc'), ['--version']);
  expect(protoc.stdout.trim()).toBe(
    `libprotoc ${findTool('protobuf')!.version.replace(/\.0$/, '')}`,
  );

  // Bins are links into the kept package trees; no staging folder is left.
  expect(await readlink(path.join(dir, 'buf'))).toBe(
    `.tools/buf@${findTool('buf')!.version}/node_modules/.bin/buf`,
  );
  expect((await readdir(dir)).sort()).toEqual(['.tools', 'buf', 'protoc']);

  // protoc finds the well-known types shipped beside it.
  const protoDir = path.join(root, 'real', 'proto');
  await mkdir(protoDir, { recursive: true });
  await writeFile(
    path.join(protoDir, 'a.proto'),
    'syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\nmessage A { google.protobuf.Timestamp at = 1; }\n',
  );
  await exec(path.join(dir, 'protoc'), [
    `-I${protoDir}`,
    `--descriptor_set_out=${path.join(protoDir, 'a.pb')}`,
    'a.proto',
  ]);
  expect((await lstat(path.join(protoDir, 'a.pb'))).size).toBeGreaterThan(0);

  // Another version replaces the tool, and the old tree goes.
  expect((await svc(['install', 'buf', '--version', '1.74.0', '--dir', dir])).code).toBe(0);
  expect((await exec(path.join(dir, 'buf'), ['--version'])).stdout.trim()).toBe('1.74.0');
  expect((await readdir(path.join(dir, '.tools'))).sort()).toEqual([
    'buf@1.74.0',
    `protobuf@${findTool('protobuf')!.version}`,
  ]);
  // Installing the same version again replaces it in place.
  expect((await svc(['install', 'buf', '--version', '1.74.0', '--dir', dir])).code).toBe(0);
  expect((await exec(path.join(dir, 'buf'), ['--version'])).stdout.trim()).toBe('1.74.0');
  expect((await readdir(dir)).sort()).toEqual(['.tools', 'buf', 'protoc']);
});

test('a failed npm install leaves nothing behind', async () => {
  const dir = path.join(root, 'failed-npm');
  const r = await svc(['install', 'buf', '--version', '0.0.0-does-not-exist', '--dir', dir]);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(/svc install: `.*npm install .*` failed/);
  expect(await tree(dir)).toEqual([]);
});

/** A fake `go` on a fake PATH: writes a binary into $GOBIN, then exits with `exitCode`. */
async function fakeGo(name: string, exitCode: number): Promise<string> {
  const pathDir = path.join(root, name);
  await mkdir(pathDir, { recursive: true });
  const go = path.join(pathDir, 'go');
  await writeFile(
    go,
    `#!/bin/sh
# args: install <module>@<version>
mkdir -p "$GOBIN"
bin="$GOBIN/$(basename "\${2%@*}")"
printf '#!/bin/sh\\necho "built from %s"\\n' "$2" > "$bin"
chmod +x "$bin"
exit ${exitCode}
`,
  );
  await chmod(go, 0o755);
  return pathDir;
}

test('the Go recipe moves the built binary into the folder', async () => {
  const machine = detectMachine(await fakeGo('go-ok', 0));
  const dir = path.join(root, 'go-ok-bin');
  const plan = planTool('protoc-gen-openapiv2', machine);
  const result = await executePlan(plan, dir);
  expect(result.bins).toEqual([path.join(dir, 'protoc-gen-openapiv2')]);
  const run = await exec(path.join(dir, 'protoc-gen-openapiv2'), ['--version']);
  expect(run.stdout.trim()).toBe(
    `built from github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@v${plan.version}`,
  );
  expect(await tree(dir)).toEqual(['protoc-gen-openapiv2']);
});

test('a failed Go install leaves no partial binary behind', async () => {
  const machine = detectMachine(await fakeGo('go-fails', 1));
  const dir = path.join(root, 'go-fails-bin');
  await expect(executePlan(planTool('gocov', machine), dir)).rejects.toThrow(
    /go install github\.com\/axw\/gocov\/gocov@v.*` failed \(exit 1\)/,
  );
  expect(await tree(dir)).toEqual([]);
});

test('a tool that fails its version check is not installed', async () => {
  const pathDir = path.join(root, 'go-broken');
  await mkdir(pathDir, { recursive: true });
  // Builds a "binary" that cannot run.
  await writeFile(
    path.join(pathDir, 'go'),
    '#!/bin/sh\nmkdir -p "$GOBIN" && printf "#!/bin/sh\\nexit 3\\n" > "$GOBIN/swag" && chmod +x "$GOBIN/swag"\n',
  );
  await chmod(path.join(pathDir, 'go'), 0o755);
  const dir = path.join(root, 'go-broken-bin');
  await expect(executePlan(planTool('swag', detectMachine(pathDir)), dir)).rejects.toThrow(
    /swag --version` failed \(exit 3\)/,
  );
  expect(await tree(dir)).toEqual([]);
});

// Debian's package lists are there once `apt-get update` has run (CI images may lack them).
const aptLists = (() => {
  try {
    return readdirSync('/var/lib/apt/lists').some((f) => f.includes('_Packages'));
  } catch {
    return false;
  }
})();

// SVC_SKIP_APT=1 skips the test that downloads a .deb (vitest shows it as skipped); otherwise a
// machine without apt-get, dpkg-deb or package lists fails it, saying what to do.
test.skipIf(process.env['SVC_SKIP_APT'] === '1')(
  'without Go, the Debian recipe extracts the binary from the .deb (no root, nothing system-wide)',
  async () => {
    const real = detectMachine();
    if (!real.aptGet || !real.dpkgDeb || !aptLists) {
      throw new Error(
        'this test downloads a Debian package with `apt-get download` and unpacks it with `dpkg-deb`: ' +
          (!real.aptGet || !real.dpkgDeb
            ? 'apt-get or dpkg-deb is not on PATH (a Debian or Ubuntu machine has both)'
            : 'apt has no package lists (run `apt-get update` as root)') +
          '; or set SVC_SKIP_APT=1 to skip it',
      );
    }
    const machine = { ...real, go: undefined };
    const plan = planTool('cfssljson', machine);
    expect(plan.recipe).toEqual({ kind: 'deb', package: 'golang-cfssl' });
    const dir = path.join(root, 'deb-bin');
    await executePlan(plan, dir);
    expect(await tree(dir)).toEqual(['cfssljson']);
    // Debian's (2016) cfssljson has no -version; its usage text shows it runs.
    const r = await exec(path.join(dir, 'cfssljson'), ['-h'], { encoding: 'utf8' }).catch(
      (err: { stdout: string; stderr: string }) => err,
    );
    expect(`${r.stdout}${r.stderr}`).toMatch(/Usage of .*cfssljson/);
  },
);

test('a tool that cannot be installed here fails before anything is done', async () => {
  const dir = path.join(root, 'no-go');
  const pathDir = path.join(root, 'only-npm');
  await mkdir(pathDir, { recursive: true });
  const prev = process.env['PATH'];
  process.env['PATH'] = pathDir;
  try {
    const r = await svc(['install', 'buf', 'protoc-gen-go-grpc', '--dir', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot install buf here: it needs npm');
    await expect(lstat(dir)).rejects.toThrow(/ENOENT/);
  } finally {
    process.env['PATH'] = prev;
  }
});

test('--dry-run prints the steps and installs nothing', async () => {
  const dir = path.join(root, 'dry');
  const r = await svc(['install', 'buf', '--dry-run', '--dir', dir]);
  expect(r.code).toBe(0);
  expect(r.out).toContain('npm install --ignore-scripts');
  expect(r.out).toContain(
    `ln -sfn .tools/buf@${findTool('buf')!.version}/node_modules/.bin/buf ${dir}/buf`,
  );
  await expect(lstat(dir)).rejects.toThrow(/ENOENT/);
});

test('help and --list', async () => {
  const help = await svc(['install', 'help']);
  for (const name of [
    'buf',
    'cfssl',
    'cfssljson',
    'gocov',
    'golangci-lint',
    'mockgen',
    'pkger',
    'protobuf',
    'protoc-gen-doc',
    'protoc-gen-go',
    'protoc-gen-go-grpc',
    'protoc-gen-grpc-gateway',
    'protoc-gen-openapiv2',
    'swag',
    'rk-std',
    'help',
  ]) {
    expect(help.out).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  }
  const list = await svc(['install', '--list']);
  expect(list.out).toMatch(
    /^buf +1\.\d+\.\d+ +npm:@bufbuild\/buf {2}go:github\.com\/bufbuild\/buf\/cmd\/buf$/m,
  );
});
