/**
 * The `typed` benchmark of `npm run bench` (issue 27's measurements): typed.ts (typed against
 * proto-loader services, gRPC and gateway, server CPU per request), typed-sizes.ts (the same at a
 * small, a 1 KB and a 100 KB message: callgrind instructions per call and CPU time), validate.ts (what
 * middleware.validate costs per call on ten constrained fields) and codec.ts (the
 * @bufbuild/protobuf codec against protobufjs's, in process), one after the other, each under
 * its own heading. Their settings: BENCH_SECONDS and BENCH_ROUNDS (typed.ts and validate.ts),
 * BENCH_CODEC_CALLS (codec.ts, 100000).
 *
 * `node --import tsx grpc/typed-contracts.ts` from bench/.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeTsx } from '../lib/built.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const hasValgrind = (): boolean =>
  spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0 &&
  spawnSync('callgrind_control', ['--version'], { stdio: 'ignore' }).status === 0;
const steps: Array<{
  title: string;
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
}> = [
  {
    title: 'Typed against proto-loader services: server CPU per request',
    command: nodeTsx(path.join(here, 'typed.ts')),
  },
  {
    // From the repository root (its servers load the root workspace's node_modules); without
    // valgrind, the CPU-time part only.
    title: 'Typed against untyped at three message sizes (issue #41)',
    command: nodeTsx(path.join(here, 'typed-sizes.ts')),
    cwd: path.resolve(here, '../..'),
    env: hasValgrind() ? {} : { TYPED_PARTS: 'cpu' },
  },
  {
    title: 'middleware.validate on a request with ten constrained fields',
    command: nodeTsx(path.join(here, 'validate.ts')),
  },
  {
    title: 'The binary codec: @bufbuild/protobuf against protobufjs, in process',
    // codec.ts imports entry-grpc's codecOf from its sources.
    command: [
      process.execPath,
      '--conditions=svcboot-source',
      '--import',
      'tsx',
      path.join(here, 'codec.ts'),
      process.env['BENCH_CODEC_CALLS'] ?? '100000',
    ],
  },
];
for (const step of steps) {
  console.log(`### ${step.title}\n`);
  const [file, ...args] = step.command;
  const r = spawnSync(file!, args, {
    stdio: 'inherit',
    cwd: step.cwd ?? path.dirname(here),
    env: { ...process.env, ...step.env },
  });
  if (r.status !== 0) {
    console.log(
      `> ${path.basename(step.command.at(-1) ?? '')} exited with ${r.status ?? r.signal}`,
    );
    process.exitCode = 1;
  }
  console.log('');
}
