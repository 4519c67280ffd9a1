import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConsoleRecord, SEPARATOR } from '@svcboot/entry-core';
import { expect, it } from 'vitest';

function withoutForceColor(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  delete env['FORCE_COLOR'];
  return env;
}

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Polls `check` every 20 ms until it is true, or fails at the deadline with what was seen. */
async function until(
  what: string,
  check: () => boolean,
  seen: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; output so far:\n${seen()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('boots its boot.yaml as a real process, logs the Bootstrap record, and exits 0 on SIGTERM', async () => {
  const child = spawn(
    process.execPath,
    ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
    {
      cwd: appDir,
      // Not FORCE_COLOR (vitest or a terminal may set it): with NO_COLOR beside it, Node 24
      // warns on stderr, which this test requires to be empty.
      env: withoutForceColor({ ...process.env, NO_COLOR: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await until(
      'the Bootstrap record',
      () => /\noperation=Bootstrap\n[\s\S]*?\nEOE\n/.test(out),
      () => out + err,
    );
    expect(out).toMatch(/^\S+\tINFO\tdemo-minimal 0\.1\.0 is booting; press Ctrl-C to stop\n/);
    expect(out).toMatch(/\tINFO\tapplog\tBootstrap logger entry\n/);

    const start = out.indexOf(`${SEPARATOR}\n`);
    const record = new Map(parseConsoleRecord(out.slice(start, out.indexOf('\nEOE\n', start) + 5)));
    expect(JSON.parse(record.get('app')!)).toEqual({
      appName: 'demo-minimal',
      appVersion: '0.1.0',
      entryName: 'applog',
      entryType: 'LoggerEntry',
    });
    expect(record.get('operation')).toBe('Bootstrap');
    expect(record.get('resCode')).toBe('OK');
    expect(record.get('eventStatus')).toBe('Ended');
    expect(JSON.parse(record.get('ids')!)).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/\tINFO\tShutdown begins \(SIGTERM\)\n/);
    // No entry serves traffic: no load balancer to wait for, so SIGTERM does not drain first.
    expect(out).not.toMatch(/Not ready; entries stop in/);
    expect(out).toMatch(/\tINFO\tapplog\tInterrupt logger entry \(SIGTERM\)\n/);
    expect(out).toMatch(/\tINFO\tShutdown complete\n$/);
    expect(err).toBe('');
  } finally {
    child.kill('SIGKILL');
  }
});
