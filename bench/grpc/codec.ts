/**
 * The grpc-js codec of a typed service (@bufbuild/protobuf toBinary / fromBinary, entry-grpc's
 * codecOf) against @grpc/proto-loader's (protobufjs), in process: Greeter's HelloResponse (one
 * string) and the README bookstore's Book (strings, a repeated string, an int64, a Timestamp).
 * CPU µs per call, the median of 5 runs of N calls each after a warm-up.
 *
 * `node --conditions=svcboot-source --import tsx grpc/codec.ts [N]` from bench/.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from '@bufbuild/protobuf';
import type { MethodDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { codecOf } from '../../libs/grpc-typed/src/codec.js';
import { BookSchema } from '../../libs/grpc-server/src/test-support/typed/gen/bookstore/v1/bookstore_pb.js';
import { HelloResponseSchema } from './servers/gen/v1/greeter_pb.js';
import { protoFile } from './servers/serve.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.argv[2] ?? 200_000);

function time(fn: () => unknown): number {
  for (let i = 0; i < N / 10; i++) fn();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) fn();
    const t = process.cpuUsage(t0);
    runs.push((t.user + t.system) / N);
  }
  return runs.sort((a, b) => a - b)[2]!;
}

type Def = MethodDefinition<unknown, unknown>;
const greeter = loadSync(protoFile)['api.v1.Greeter'] as Record<string, Def>;
const bookstore = loadSync('bookstore/v1/bookstore.proto', {
  includeDirs: [path.resolve(here, '../../libs/grpc-server/src/test-support/typed/proto')],
})['bookstore.v1.Bookstore'] as Record<string, Def>;

const book = {
  id: '42',
  title: 'Dune',
  author: 'Frank Herbert',
  tags: ['sf', 'classic', 'desert'],
  pageCount: 412n,
  createTime: { seconds: 1_700_000_000n, nanos: 120_000_000 },
};
const bookPlain = {
  id: '42',
  title: 'Dune',
  author: 'Frank Herbert',
  tags: ['sf', 'classic', 'desert'],
  page_count: 412,
  create_time: { seconds: 1_700_000_000, nanos: 120_000_000 },
};

const rows: Array<[string, number, number]> = [];
function row(what: string, loader: () => unknown, es: () => unknown): void {
  rows.push([what, time(loader), time(es)]);
}

const hello = codecOf(HelloResponseSchema);
const helloMsg = create(HelloResponseSchema, { message: 'hello!' });
row(
  'HelloResponse: serialize (a message)',
  () => greeter['Hello']!.responseSerialize({ message: 'hello!' }),
  () => hello.serialize(helloMsg),
);
row(
  'HelloResponse: serialize (plain fields)',
  () => greeter['Hello']!.responseSerialize({ message: 'hello!' }),
  () => hello.serialize({ message: 'hello!' }),
);
const helloBytes = greeter['Hello']!.responseSerialize({ message: 'hello!' });
row(
  'HelloResponse: deserialize',
  () => greeter['Hello']!.responseDeserialize(helloBytes),
  () => hello.deserialize(helloBytes),
);
const bookCodec = codecOf(BookSchema);
const bookMsg = create(BookSchema, book);
row(
  'Book: serialize',
  () => bookstore['GetBook']!.responseSerialize(bookPlain),
  () => bookCodec.serialize(bookMsg),
);
const bookBytes = bookCodec.serialize(bookMsg);
row(
  'Book: deserialize',
  () => bookstore['GetBook']!.responseDeserialize(bookBytes),
  () => bookCodec.deserialize(bookBytes),
);

console.log(
  `> ${N.toLocaleString('en-US')} calls × 5 runs per cell (median), Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`,
);
console.log('');
console.log('| | proto-loader (protobufjs), µs | @bufbuild/protobuf, µs | ratio |');
console.log('|---|---:|---:|---:|');
for (const [what, a, b] of rows)
  console.log(`| ${what} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
