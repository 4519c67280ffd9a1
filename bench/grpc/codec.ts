/**
 * The grpc-js codec of a typed service (grpc-typed's codecOf: @bufbuild/protobuf's toBinary, and
 * binary.ts's compiled decoder, fromBinary's result) against @grpc/proto-loader's (protobufjs), in process: Greeter's HelloResponse (one
 * string), the README bookstore's Book (strings, a repeated string, an int64, a Timestamp) and
 * typed-sizes.ts's Doc at ~1 KB and ~100 KB (nested items, maps, packed ints, bytes, a oneof).
 * CPU µs per call, the median of 5 runs of N calls each (N ÷ 10 for 1 KB, N ÷ 1000 for 100 KB)
 * after a warm-up.
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
import { DocSchema } from './servers/gen/bench/v1/sizes_pb.js';
import { HelloResponseSchema } from './servers/gen/v1/greeter_pb.js';
import { protoFile } from './servers/serve.js';
import { SIZES } from './typed-sizes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.argv[2] ?? 200_000);

function time(fn: () => unknown, n = N): number {
  for (let i = 0; i < n / 10; i++) fn();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const t = process.cpuUsage(t0);
    runs.push((t.user + t.system) / n);
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
function row(what: string, loader: () => unknown, es: () => unknown, n = N): void {
  rows.push([what, time(loader, n), time(es, n)]);
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

const sizesProto = path.join(here, 'servers/proto/bench/v1/sizes.proto');
const sizes = loadSync(sizesProto)['bench.v1.Sizes'] as Record<string, Def>;
const docCodec = codecOf(DocSchema);
for (const [name, size, n] of [
  ['Doc 1 KB', SIZES['1k'], Math.max(1, Math.round(N / 10))],
  ['Doc 100 KB', SIZES['100k'], Math.max(1, Math.round(N / 1000))],
] as const) {
  const bytes = docCodec.serialize(size.doc);
  const plain = sizes['Echo']!.requestDeserialize(bytes);
  row(
    `${name}: serialize`,
    () => sizes['Echo']!.responseSerialize(plain),
    () => docCodec.serialize(size.doc),
    n,
  );
  row(
    `${name}: deserialize`,
    () => sizes['Echo']!.requestDeserialize(bytes),
    () => docCodec.deserialize(bytes),
    n,
  );
}

console.log(
  `> ${N.toLocaleString('en-US')} calls × 5 runs per cell (median), Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`,
);
console.log('');
console.log(
  '| | proto-loader (protobufjs), µs | typed (codecOf: toBinary, binary.ts decoder), µs | ratio |',
);
console.log('|---|---:|---:|---:|');
for (const [what, a, b] of rows)
  console.log(`| ${what} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
