import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Resolves with the first match of `re` in the stream's text, or rejects at the deadline. */
function waitFor(read: () => string, re: RegExp, deadlineMs: number): Promise<RegExpExecArray> {
  const until = Date.now() + deadlineMs;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      const m = re.exec(read());
      if (m) resolve(m);
      else if (Date.now() > until)
        reject(new Error(`timed out waiting for ${re}; got:\n${read()}`));
      else setTimeout(poll, 20);
    };
    poll();
  });
}

describe('graceful shutdown of a process', () => {
  it('on SIGTERM finishes the work in flight, interrupts entries, flushes logs and exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=svcboot-source',
        '--import',
        'tsx',
        path.join(here, 'test-support/drain-app.ts'),
      ],
      {
        cwd: path.join(here, '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    try {
      const port = Number((await waitFor(() => out, /READY port=(\d+)/, 30_000))[1]);
      const socket = net.connect(port, '127.0.0.1');
      let reply = '';
      socket.on('data', (b: Buffer) => (reply += b.toString()));
      socket.write('work\n');
      await waitFor(() => reply, /accepted/, 10_000);
      child.kill('SIGTERM');
      // The work is in flight when the signal arrives, and ends only once the app said so.
      await waitFor(() => out, /INTERRUPT in-flight=1\n/, 10_000);
      expect(reply).toBe('accepted\n');
      socket.write('finish\n');
      await waitFor(() => reply, /done/, 10_000);
      expect(reply).toBe('accepted\ndone\n');
      expect(await exited).toBe(0);
      expect(out).toMatch(/Shutdown begins \(SIGTERM\)/);
      expect(out).toMatch(/Interrupt tcpwork entry \(SIGTERM\)/);
      expect(out).toMatch(/Shutdown complete\n/);
      expect(out).toMatch(/operation=Bootstrap\nresCode=OK/);
      expect(err).toBe('');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('exits non-zero with the error on stderr when boot fails', async () => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=svcboot-source',
        '--import',
        'tsx',
        '-e',
        "import('./src/index.ts').then(m => m.runApp(undefined, { configText: 'grpcc: []', argv: [] }))",
      ],
      { cwd: path.join(here, '..'), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(err).toContain('unknown top-level key "grpcc"; did you mean "grpc"?');
    // The code the README's "Errors" table lists, on the message's first line.
    expect(err.split('\n')[0]).toMatch(/ in the configuration \[SVC_CONFIG_INVALID\]$/);
  });

  it('writes the last log lines before exiting when stdout is a file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svcboot-stdout-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const child = spawn(
        process.execPath,
        [
          '--conditions=svcboot-source',
          '--import',
          'tsx',
          path.join(here, 'test-support/drain-app.ts'),
        ],
        {
          cwd: path.join(here, '..'),
          stdio: ['ignore', fd, 'ignore'],
        },
      );
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => resolve(code)),
      );
      await waitFor(() => readFileSync(file, 'utf8'), /READY port=/, 30_000);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const out = readFileSync(file, 'utf8');
      expect(out).toMatch(/Interrupt tcpwork entry \(SIGTERM\)/);
      expect(out).toMatch(/Shutdown complete\n$/);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
