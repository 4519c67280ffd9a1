import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { run, waitFor } from '@svcboot/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutputSet } from './outputs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const outputsUrl = pathToFileURL(path.join(here, 'outputs.ts')).href;

/** A record of varying length (some multi-byte characters), numbered so that order can be checked. */
function record(source: string, i: number): string {
  return `${source} #${i} ${'é'.repeat(i % 7)}${'x'.repeat((i * 37) % 1500)}\n`;
}

/** Runs `body` (JavaScript, with `OutputSet` and `file` in scope) in a child node process. */
function runChild(body: string, file: string): ReturnType<typeof run> {
  const script = `import(${JSON.stringify(outputsUrl)}).then(async ({ OutputSet }) => { const file = ${JSON.stringify(file)};\n${body}\n});`;
  return run(process.execPath, ['--conditions=svcboot-source', '--import', 'tsx', '-e', script], { cwd: path.join(here, '../..'), allowFailure: true });
}

describe('OutputSet', () => {
  let dir: string;
  let file: string;
  let set: OutputSet;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-outputs-'));
    file = path.join(dir, 'logs', 'events.log');
    set = new OutputSet();
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await set.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the records of one turn from several loggers as one write, in order, and flush waits for it', async () => {
    const a = set.get(file);
    const b = set.get(file);
    expect(b).toBe(a); // one output per path
    const expected: string[] = ['opened\n'];
    a.write(expected[0]!);
    await set.flush(); // the file is open
    const writes = vi.spyOn(fs, 'write');
    for (let i = 0; i < 2000; i++) {
      const r = record(i % 3 === 0 ? 'b' : 'a', i);
      (i % 3 === 0 ? b : a).write(r);
      expected.push(r);
    }
    await set.flush();
    // ~1.5 MB: over the 64 KiB threshold, so several writes, each of many records.
    expect(writes.mock.calls.length).toBeGreaterThan(1);
    expect(writes.mock.calls.length).toBeLessThan(100);
    expect(await readFile(file, 'utf8')).toBe(expected.join(''));
  });

  it('writes a small turn once, at the end of the turn', async () => {
    const out = set.get(file);
    out.write('opened\n');
    await set.flush(); // the file is open
    const writes = vi.spyOn(fs, 'write');
    for (let i = 0; i < 20; i++) out.write(record('a', i));
    expect(writes).not.toHaveBeenCalled();
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveBeenCalledTimes(1);
    await set.flush();
    expect(await readFile(file, 'utf8')).toBe('opened\n' + Array.from({ length: 20 }, (_, i) => record('a', i)).join(''));
  });

  it('keeps the order of records written across turns, while earlier batches are in flight', async () => {
    const out = set.get(file);
    const expected: string[] = [];
    for (let turn = 0; turn < 50; turn++) {
      for (let i = 0; i < 40; i++) {
        const r = record(`t${turn}`, i);
        out.write(r);
        expected.push(r);
      }
      await new Promise((r) => (turn % 2 ? setImmediate(r) : process.nextTick(r)));
    }
    await set.flush();
    expect(await readFile(file, 'utf8')).toBe(expected.join(''));
  });

  it('writes large volumes past the size threshold, from many turns, completely', async () => {
    const out = set.get(file);
    let expectedBytes = 0;
    const big = 'z'.repeat(300_000) + '\n'; // a record larger than a batch
    for (let turn = 0; turn < 20; turn++) {
      for (let i = 0; i < 500; i++) {
        const r = i === 250 ? big : record('v', i);
        out.write(r);
        expectedBytes += Buffer.byteLength(r);
      }
      if (turn % 5 === 0) await new Promise((r) => setImmediate(r));
    }
    await set.flush();
    const text = await readFile(file, 'utf8');
    expect(Buffer.byteLength(text)).toBe(expectedBytes);
    expect(text.split('\n').filter((l) => l.startsWith('zzz'))).toHaveLength(20);
  });

  it('flush resolves at once when nothing is pending, and close drops later writes without throwing', async () => {
    const out = set.get(file);
    await set.flush();
    out.write('before\n');
    await set.flush();
    await set.flush();
    await set.close();
    expect(() => out.write('after\n')).not.toThrow();
    expect(() => set.get(file).write('after, new handle\n')).not.toThrow();
    await set.flush();
    await new Promise((r) => setTimeout(r, 20));
    expect(await readFile(file, 'utf8')).toBe('before\n');
  });

  it('close does not close the process stdout or stderr', async () => {
    const out = set.get('stdout');
    set.get('stderr');
    await set.close();
    out.write('dropped\n');
    expect(fs.fstatSync(1)).toBeDefined();
    expect(fs.fstatSync(2)).toBeDefined();
  });

  it('writes everything queued when the process exits with process.exit()', async () => {
    const n = 5000;
    const result = await runChild(
      `const set = new OutputSet(); const out = set.get(file);
       for (let i = 0; i < ${n / 2}; i++) out.write('rec ' + i + ' ' + 'x'.repeat(i % 300) + '\\n');
       await new Promise((r) => setTimeout(r, 50)); // the file is open, the first half is written or in flight
       for (let i = ${n / 2}; i < ${n}; i++) out.write('rec ' + i + ' ' + 'x'.repeat(i % 300) + '\\n');
       process.exit(3);`,
      file,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    const lines = (await readFile(file, 'utf8')).split('\n').slice(0, -1);
    expect(lines).toEqual(Array.from({ length: n }, (_, i) => `rec ${i} ${'x'.repeat(i % 300)}`));
  });

  it('writes everything queued at an uncaught exception, before the file even opened', async () => {
    const result = await runChild(
      `const set = new OutputSet(); const out = set.get(file);
       for (let i = 0; i < 1000; i++) out.write('rec ' + i + '\\n');
       throw new Error('boom from the child');`,
      file,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('boom from the child');
    expect(await readFile(file, 'utf8')).toBe(Array.from({ length: 1000 }, (_, i) => `rec ${i}\n`).join(''));
  });

  it('writes nothing at exit for a closed set, and leaves no exit listener behind', async () => {
    const result = await runChild(
      `const set = new OutputSet(); const out = set.get(file); set.get('stdout');
       out.write('one\\n');
       await set.close();
       out.write('two\\n');
       console.log('exit listeners: ' + process.listenerCount('exit'));
       process.exit(0);`,
      file,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('exit listeners: 0\n');
    expect(await readFile(file, 'utf8')).toBe('one\n');
  });

  it('delivers everything, in order, to a pipe that is full for a while (EAGAIN on a non-blocking stdout)', async () => {
    // Using process.stdout makes fd 1 non-blocking. The child says on stderr when a write got
    // EAGAIN; only then does this side start reading.
    const child = spawn(
      process.execPath,
      [
        '--conditions=svcboot-source',
        '--import',
        'tsx',
        '-e',
        `const fs = require('node:fs');
         const write = fs.write;
         let told = false;
         fs.write = (...args) => {
           const cb = args.pop();
           write(...args, (err, n) => {
             if (err && err.code === 'EAGAIN' && !told) { told = true; fs.writeSync(2, 'EAGAIN\\n'); }
             cb(err, n);
           });
         };
         import(${JSON.stringify(outputsUrl)}).then(async ({ OutputSet }) => {
           console.log('start');
           const set = new OutputSet(); const out = set.get('stdout');
           for (let turn = 0; turn < 20; turn++) {
             for (let i = 0; i < 100; i++) out.write(turn + ':' + i + ' ' + 'x'.repeat(1000) + '\\n');
             await new Promise((r) => setImmediate(r));
           }
           await set.close();
         });`,
      ],
      { cwd: path.join(here, '../..'), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.stdout.pause();
      await waitFor('the child to hit a full pipe', () => stderr.includes('EAGAIN'), { timeoutMs: 20_000 });
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stdout.resume();
      expect(await exited).toBe(0);
      await waitFor('the end of the output', () => child.stdout.readableEnded || stdout.length > 2_000_000);
      expect(stderr).toBe('EAGAIN\n');
      const lines = stdout.split('\n').slice(0, -1);
      expect(lines[0]).toBe('start');
      expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(Array.from({ length: 2000 }, (_, k) => `${Math.floor(k / 100)}:${k % 100}`));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('reports a failing output once on stderr and keeps the process running', async () => {
    // /dev/full opens, and every write to it fails with ENOSPC.
    const result = await runChild(
      `const set = new OutputSet(); const out = set.get('/dev/full');
       for (let turn = 0; turn < 5; turn++) { out.write('lost ' + turn + '\\n'); await new Promise((r) => setImmediate(r)); }
       await set.flush();
       out.write('lost too\\n');
       await set.close();
       console.log('still running');`,
      file,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('still running\n');
    expect(result.stderr.match(/svcboot: cannot write log records to \/dev\/full: .*ENOSPC/g)).toHaveLength(1);
  });

  it('reports a file that cannot be opened once, and drops its records', async () => {
    fs.writeFileSync(path.join(dir, 'plain'), '');
    const result = await runChild(
      `const set = new OutputSet(); const out = set.get(file + '/plain/x.log');
       out.write('lost\\n');
       await set.flush();
       out.write('lost too\\n');
       await set.close();
       console.log('still running');`,
      dir,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('still running\n');
    expect(result.stderr.match(/svcboot: cannot open .*plain\/x\.log for log records: (EEXIST|ENOTDIR)/g)).toHaveLength(1);
  });
});
