import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hasProtoLoaderRequestDeserializer,
  hasProtoLoaderResponseSerializer,
} from './proto-loader-codec.js';

// proto-loader's real codec functions are recognised, whatever its options; anything else (a
// wrapper, a bound copy, the other direction's function, a look-alike with more in it, a
// definition without proto-loader's responseType) is not.
const PROTO = `
syntax = "proto3";
package codec.v1;
message Req { string name = 1; int64 n = 2; }
message Reply { string message = 1; }
service Codec {
  rpc Unary(Req) returns (Reply);
  rpc Stream(Req) returns (stream Reply);
}
`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'proto-loader-codec-'));
const file = path.join(dir, 'codec.proto');
writeFileSync(file, PROTO);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Def = MethodDefinition<unknown, unknown>;
const methodsOf = (options: Options): Def[] => {
  const service = loadSync(file, options)['codec.v1.Codec'] as unknown as ServiceDefinition;
  return Object.values(service) as Def[];
};

describe.each<Options>([
  {},
  { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true },
])('proto-loader with options %j', (options) => {
  it.each(methodsOf(options).map((d) => [d.path, d] as const))('%s: recognised', (_, def) => {
    expect(hasProtoLoaderResponseSerializer(def)).toBe(true);
    expect(hasProtoLoaderRequestDeserializer(def)).toBe(true);
  });
});

describe('not proto-loader', () => {
  const real = methodsOf({})[0]!;
  const cases: Array<[string, Def]> = [
    [
      'hand-written functions',
      {
        ...real,
        requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
        responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
      },
    ],
    [
      'wrappers around proto-loader’s functions',
      {
        ...real,
        requestDeserialize: (b: Buffer) => real.requestDeserialize(b),
        responseSerialize: (v: unknown) => real.responseSerialize(v),
      },
    ],
    [
      'bound copies of them',
      {
        ...real,
        requestDeserialize: real.requestDeserialize.bind(undefined),
        responseSerialize: real.responseSerialize.bind(undefined),
      },
    ],
    [
      'the other direction’s function',
      {
        ...real,
        requestDeserialize: real.requestSerialize as unknown as Def['requestDeserialize'],
        responseSerialize: real.responseDeserialize as unknown as Def['responseSerialize'],
      },
    ],
    [
      'look-alikes',
      {
        ...real,
        // The deserializer must be proto-loader's whole; the serializer must encode what
        // fromObject gave (the text may hold more: response-fast.ts probes every plan).
        requestDeserialize: new Function(
          'cls',
          'options',
          'return function deserialize(argBuf) { return cls.toObject(cls.decode(argBuf), options) || {}; }',
        )() as Def['requestDeserialize'],
        responseSerialize: new Function(
          'cls',
          'return function serialize(arg) { const message = cls.fromObject(arg); return cls.encode(cls.fromObject({})).finish(); }',
        )() as Def['responseSerialize'],
      },
    ],
  ];
  it.each(cases)('%s', (_, def) => {
    expect(hasProtoLoaderRequestDeserializer(def)).toBe(false);
    expect(hasProtoLoaderResponseSerializer(def)).toBe(false);
  });

  it('proto-loader’s serializer without its responseType descriptor', () => {
    const { responseType: _, ...bare } = real as Def & { responseType?: unknown };
    expect(hasProtoLoaderResponseSerializer(bare as Def)).toBe(false);
    expect(
      hasProtoLoaderResponseSerializer({
        ...real,
        responseType: { format: 'Protocol Buffer 3 EnumDescriptorProto' },
      } as Def),
    ).toBe(false);
  });
});
