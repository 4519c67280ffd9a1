import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const run = promisify(execFile);

describe('the modules grpc-server loads at every start', () => {
  it('read node:fs without building its ES facade (which loads fs streams and fs/promises)', async () => {
    // The built files, in a plain node (no tsx, whose own loader imports node:fs). protobufjs,
    // which they import, loads fs/promises itself; the facade is what loads the fs streams.
    const files = ['api/protos.js', 'api/descriptor-set.js', 'comments.js'].map(
      (f) => pathToFileURL(path.join(dist, f)).href,
    );
    const script = [
      ...files.map((u) => `await import(${JSON.stringify(u)});`),
      "console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule internal/fs/'))));",
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    const loaded = JSON.parse(stdout) as string[];
    // Loading worked: the modules read files through fs's own helpers.
    expect(loaded).toContain('NativeModule internal/fs/utils');
    expect(loaded).not.toContain('NativeModule internal/fs/streams');
  });
});
