import { credentials, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { makeClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conformanceProto,
  request,
  startConformance,
  testdata,
  type Conformance,
} from './test-support/harness.js';

// Issue 45 point 1: map keys of the 64-bit integer types and bool through every JSON path.
// Expected values: grpc-gateway runtime/query_test.go TestPopulateParameters (map_value3[-2],
// map_value5[-1], map_value7[3], map_value9[4], map_value15[true] = "value"), written as protojson
// writes map keys: the key's decimal text, `true` / `false` (encoding/protojson encode.go
// marshalMap: `mk.String()`; decode.go unmarshalMapKey: strconv.ParseInt/ParseUint base 10,
// "true"/"false" only, a duplicate key refused).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance('    connect:\n      enabled: true\n');
});
afterAll(async () => {
  await c.stop();
});

const INT64_MIN = '-9223372036854775808';
const UINT64_MAX = '18446744073709551615';

/** One key of each type, the extremes of the 64-bit ones, as protojson writes them. */
const keysJson = {
  int64Keys: { '-1': 'value', [INT64_MIN]: 'min' },
  uint64Keys: { '4': 'value', [UINT64_MAX]: 'max' },
  sint64Keys: { '-2': 'value' },
  fixed64Keys: { [UINT64_MAX]: 'max' },
  sfixed64Keys: { '-3': 'value' },
  boolKeys: { true: 'value', false: 'no' },
  int32Keys: { '-2': 'value' },
  uint32Keys: { '3': 'value' },
};

/** What the handler (a @grpc/proto-loader definition, keepCase) saw, as "field key". */
const seen = [
  `int64_keys ${INT64_MIN}`,
  'int64_keys -1',
  'uint64_keys 4',
  `uint64_keys ${UINT64_MAX}`,
  'sint64_keys -2',
  `fixed64_keys ${UINT64_MAX}`,
  'sfixed64_keys -3',
  'bool_keys true',
  'bool_keys false',
  'int32_keys -2',
  'uint32_keys 3',
].sort();

const withNested = {
  ...keysJson,
  nested: { '-5': { int64Keys: { '-1': 'inner' }, boolKeys: { false: 'f' } } },
};
const seenNested = [...seen, 'nested.-5.bool_keys false', 'nested.-5.int64_keys -1'].sort();

describe('map keys of 64-bit and bool type (protojson: decimal strings, true/false)', () => {
  it('query parameters: runtime/query.go populateMapField, TestPopulateParameters map_value5[-1]=value', async () => {
    const q = [
      'int64_keys[-1]=value',
      `int64_keys[${INT64_MIN}]=min`,
      'uint64_keys[4]=value',
      `uint64_keys[${UINT64_MAX}]=max`,
      'sint64_keys[-2]=value',
      `fixed64_keys[${UINT64_MAX}]=max`,
      'sfixed64_keys[-3]=value',
      'bool_keys[true]=value',
      'bool_keys[false]=no',
      'int32_keys[-2]=value',
      'uint32_keys[3]=value',
    ].join('&');
    const r = await request(c, 'GET', `/v1/keys?${q}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ ...keysJson, seen });
  });

  it('query parameters: a key outside its type is 400 InvalidArgument (strconv.ParseInt/ParseUint/ParseBool)', async () => {
    for (const q of [
      'int64_keys[9223372036854775808]=x',
      'uint64_keys[-1]=x',
      'fixed64_keys[18446744073709551616]=x',
      'bool_keys[maybe]=x',
    ]) {
      const r = await request(c, 'GET', `/v1/keys?${q}`);
      expect(r.status, q).toBe(400);
      expect((r.json as { code: number }).code, q).toBe(3);
    }
  });

  it('request and response bodies: keys of every type, and maps in the values of a map', async () => {
    const r = await request(c, 'POST', '/v1/keys', JSON.stringify(withNested));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ ...withNested, seen: seenNested });
  });

  it('request bodies: protojson reads integer keys in base 10 with a sign ("+7", "007" are 7)', async () => {
    const r = await request(
      c,
      'POST',
      '/v1/keys',
      JSON.stringify({ int64Keys: { '+7': 'a' }, uint64Keys: { '007': 'b' } }),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      int64Keys: { '7': 'a' },
      uint64Keys: { '7': 'b' },
      seen: ['int64_keys 7', 'uint64_keys 7'],
    });
  });

  it('request bodies: a key that is not of the map key type, or a key given twice, is 400', async () => {
    for (const body of [
      { int64Keys: { x: 'a' } },
      { int64Keys: { '1.0': 'a' } },
      { int64Keys: { '0x10': 'a' } },
      { uint64Keys: { '-1': 'a' } },
      { sint64Keys: { '9223372036854775808': 'a' } },
      { int32Keys: { '2147483648': 'a' } },
      { boolKeys: { TRUE: 'a' } },
      { boolKeys: { '1': 'a' } },
      { int64Keys: { '1': 'a', '01': 'b' } },
    ]) {
      const r = await request(c, 'POST', '/v1/keys', JSON.stringify(body));
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((r.json as { code: number }).code, JSON.stringify(body)).toBe(3);
    }
  });

  it('server streams: each message of the stream with protojson keys', async () => {
    const r = await request(c, 'POST', '/v1/keys:stream', JSON.stringify(withNested));
    expect(r.status, r.text).toBe(200);
    const messages = r.text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
    const one = { result: { ...withNested, seen: seenNested } };
    expect(messages).toEqual([one, one]);
  });

  it('Connect JSON: the request and the answer with protojson keys', async () => {
    const res = await fetch(`${c.base}/conformance.v1.Conformance/Keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify(withNested),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ...withNested, seen: seenNested });
    const bad = await fetch(`${c.base}/conformance.v1.Conformance/Keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify({ boolKeys: { yes: 'a' } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_argument');
  });

  it('gRPC: a grpc-js handler of a proto-loader definition sees decimal keys, and its "false" key is written as false', async () => {
    const pkg = loadSync(conformanceProto, {
      includeDirs: [testdata],
      keepCase: true,
      longs: String,
    });
    const Client = makeClientConstructor(
      pkg['conformance.v1.Conformance'] as ServiceDefinition,
      'Conformance',
    );
    const client = new Client(`127.0.0.1:${c.port}`, credentials.createInsecure()) as unknown as {
      Keys(
        req: unknown,
        cb: (
          err: ServiceError | null,
          res?: { seen: string[]; bool_keys: Record<string, string> },
        ) => void,
      ): void;
      close(): void;
    };
    try {
      const reply = await new Promise<{ seen: string[]; bool_keys: Record<string, string> }>(
        (resolve, reject) =>
          client.Keys(
            {
              int64_keys: { '-1': 'value' },
              fixed64_keys: { [UINT64_MAX]: 'max' },
              bool_keys: { true: 'value' },
            },
            (err, res) => (err ? reject(err) : resolve(res!)),
          ),
      );
      expect(reply.seen).toEqual(['bool_keys true', `fixed64_keys ${UINT64_MAX}`, 'int64_keys -1']);
      // The client decodes with proto-loader: bool keys are plain; the echoed key stayed true.
      expect(reply.bool_keys).toEqual({ true: 'value' });
    } finally {
      client.close();
    }
  });
});
