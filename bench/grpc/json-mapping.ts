/**
 * One JSON mapping or two: the gateway's hand-written proto3 JSON mapping (entry-grpc
 * src/gateway/json.ts, over protobufjs messages) against @bufbuild/protobuf's toJson / fromJson
 * (which pass the protobuf conformance suite), on the gateway conformance suite's `Everything`
 * message (every scalar, repeated, maps, oneof, enums, every well-known type but Any).
 *
 * For N random messages, encoded once with @bufbuild/protobuf:
 *  - to JSON: the gateway's path (protobufjs decode, messageToJson) against toJson (default options:
 *    JSON names, unpopulated fields left out, enums by name); every difference is listed by field;
 *  - from JSON: toJson's text read back by the gateway (jsonToPlain, fromObject, encode) and by
 *    fromJson, each compared with the original message (`equals`);
 *  - the CPU time per message of each direction, in process.
 *
 * `node --conditions=svcboot-source --import tsx grpc/json-mapping.ts [N] [seed]` from bench/.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  create,
  createFileRegistry,
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  type DescField,
  type DescMessage,
  type JsonValue,
  type Message,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import { jsonToPlain, messageToJson } from '../../libs/grpc-server/src/protojson/json.js';
import { loadProtoRoot } from '../../libs/openapi/src/api/protos.js';
import { bufBinary } from '@svcboot/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.resolve(here, '../../libs/grpc-gateway/src/conformance/testdata');
const protos = path.resolve(here, '../../libs/grpc-server/src/test-support/protos');
const N = Number(process.argv[2] ?? 2000);
let seed = Number(process.argv[3] ?? 1);

/** mulberry32: a small seeded generator, so a run can be repeated. */
function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]!;

const buf = await bufBinary();
/** The conformance protos with the googleapis files they import (as the suite's harness loads them). */
const work = mkdtempSync(path.join(os.tmpdir(), 'json-mapping-'));
mkdirSync(path.join(work, 'conformance/v1'), { recursive: true });
// protobufjs reads its (google.api.http) options without the import protoc asks for.
writeFileSync(
  path.join(work, 'conformance/v1/conformance.proto'),
  readFileSync(path.join(testdata, 'conformance/v1/conformance.proto'), 'utf8').replace(
    'package conformance.v1;',
    'package conformance.v1;\nimport "google/api/annotations.proto";',
  ),
);
cpSync(path.join(testdata, 'google'), path.join(work, 'google'), { recursive: true });
for (const f of ['annotations.proto', 'http.proto'])
  cpSync(path.join(protos, 'google/api', f), path.join(work, 'google/api', f));
const set = fromBinary(FileDescriptorSetSchema, execFileSync(buf, ['build', work, '-o', '-']));
rmSync(work, { recursive: true, force: true });
const registry = createFileRegistry(set);
const Everything = registry.getMessage('conformance.v1.Everything')!;
const pjType = loadProtoRoot(['conformance/v1/conformance.proto'], [testdata], testdata).lookupType(
  'conformance.v1.Everything',
);

// ------------------------------------------------------------------ random messages

const STRINGS = ['', 'a', 'héllo wörld', 'line\nbreak "quoted" \\ back', '日本語', '😀 emoji'];
// No -0: JSON.stringify writes it as 0, which reads back as unset on both sides.
const DOUBLES = [0, 1.5, -2.25, 1e21, 1e-7, 123456.789, Number.NaN, Infinity, -Infinity];

function scalar(f: DescField & { fieldKind: 'scalar' | 'list' | 'map' }, t: number): unknown {
  switch (t) {
    case 1: // double
      return pick(DOUBLES);
    case 2: // float: values a float holds exactly
      return pick([0, 1.5, -2.25, 0.125, 1024, Number.NaN, Infinity]);
    case 3:
    case 16:
    case 18: // int64 sfixed64 sint64
      return pick([0n, 1n, -1n, 42n, 2n ** 40n, -(2n ** 62n), 2n ** 63n - 1n, -(2n ** 63n)]);
    case 4:
    case 6: // uint64 fixed64
      return pick([0n, 1n, 42n, 2n ** 40n, 2n ** 63n, 2n ** 64n - 1n]);
    case 5:
    case 15:
    case 17: // int32 sfixed32 sint32
      return pick([0, 1, -1, 2147483647, -2147483648]);
    case 7:
    case 13: // fixed32 uint32
      return pick([0, 1, 4294967295]);
    case 8:
      return rand() < 0.5;
    case 9:
      return pick(STRINGS);
    case 12:
      return new Uint8Array(Array.from({ length: int(0, 5) }, () => int(0, 255)));
    default:
      throw new Error(`${f.name}: no generator for scalar type ${t}`);
  }
}

function wkt(desc: DescMessage, depth: number): unknown {
  switch (desc.typeName) {
    case 'google.protobuf.Timestamp':
      return {
        seconds: BigInt(int(-62135596800, 253402300799)),
        nanos: pick([0, 5, 120000000, 999999999]),
      };
    case 'google.protobuf.Duration': {
      const s = int(-315576000000, 315576000000);
      const n = pick([0, 5, 500000000]);
      return { seconds: BigInt(s), nanos: s < 0 ? -n : s > 0 ? n : 0 };
    }
    case 'google.protobuf.FieldMask':
      return { paths: pick([[], ['a'], ['foo_bar', 'baz.qux_quux']]) };
    case 'google.protobuf.Struct':
      return {
        fields: {
          a: { kind: { case: 'numberValue', value: 1 } },
          b: { kind: { case: 'stringValue', value: 'x' } },
        },
      };
    case 'google.protobuf.Value':
      return pick([
        { kind: { case: 'nullValue', value: 0 } },
        { kind: { case: 'boolValue', value: true } },
        { kind: { case: 'numberValue', value: 2.5 } },
        { kind: { case: 'stringValue', value: 'v' } },
      ]);
    case 'google.protobuf.ListValue':
      return {
        values: [
          { kind: { case: 'numberValue', value: 1 } },
          { kind: { case: 'stringValue', value: 's' } },
        ],
      };
    case 'google.protobuf.Any':
      return undefined; // needs a type registry on both sides: left out
    default:
      if (desc.typeName.startsWith('google.protobuf.') && desc.typeName.endsWith('Value')) {
        const v = desc.fields[0]!;
        // protobuf-es holds a wrapper field as its plain value.
        return scalar(v as never, v.fieldKind === 'scalar' ? v.scalar : 9);
      }
      return depth > 2 ? {} : randomInit(desc, depth + 1);
  }
}

function randomInit(desc: DescMessage, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of desc.fields) {
    if (rand() < 0.4) continue;
    if (f.oneof && !f.oneof.name.startsWith('_')) continue;
    switch (f.fieldKind) {
      case 'scalar':
        out[f.localName] = scalar(f, f.scalar);
        break;
      case 'enum':
        out[f.localName] = pick(f.enum.values).number;
        break;
      case 'message': {
        const v = wkt(f.message, depth);
        if (v !== undefined) out[f.localName] = v;
        break;
      }
      case 'list':
        out[f.localName] = Array.from({ length: int(0, 3) }, () =>
          f.listKind === 'scalar'
            ? scalar(f, f.scalar)
            : f.listKind === 'enum'
              ? pick(f.enum.values).number
              : wkt(f.message, depth),
        ).filter((x) => x !== undefined);
        break;
      case 'map': {
        const m: Record<string, unknown> = {};
        for (let i = int(0, 3); i > 0; i--) {
          const key = String(scalar(f as never, f.mapKey));
          m[key] =
            f.mapKind === 'scalar'
              ? scalar(f, f.scalar)
              : f.mapKind === 'enum'
                ? pick(f.enum.values).number
                : wkt(f.message, depth);
        }
        out[f.localName] = m;
        break;
      }
    }
  }
  // One oneof member, sometimes.
  for (const o of desc.oneofs) {
    if (o.name.startsWith('_') || rand() < 0.5) continue;
    const f = pick(o.fields);
    let value: unknown = 1;
    if (f.fieldKind === 'scalar') value = scalar(f, f.scalar);
    else if (f.fieldKind === 'message') value = wkt(f.message, depth) ?? {};
    out[o.localName] = { case: f.localName, value };
  }
  return out;
}

// ------------------------------------------------------------------ comparison

const marshal = { useProtoNames: false, emitUnpopulated: false, useEnumNumbers: false };
const diffs = new Map<string, { count: number; example: string }>();
function note(key: string, example: string): void {
  const d = diffs.get(key);
  if (d) d.count++;
  else diffs.set(key, { count: 1, example });
}

function compareJson(
  gw: Record<string, unknown>,
  es: Record<string, unknown>,
  what = 'to JSON',
): boolean {
  let same = true;
  for (const k of new Set([...Object.keys(gw), ...Object.keys(es)])) {
    const a = JSON.stringify(gw[k]);
    const b = JSON.stringify(es[k]);
    if (a !== b) {
      same = false;
      note(`${what}: ${k}`, `gateway ${a?.slice(0, 80)} | protobuf-es ${b?.slice(0, 80)}`);
    }
  }
  return same;
}

const originals: string[] = [];
const messages: Message[] = [];
for (let i = 0; i < N; i++) messages.push(create(Everything, randomInit(Everything) as never));
const bytes = messages.map((m) => toBinary(Everything, m));
for (const m of messages) originals.push(canonical(toJson(Everything, m)));

/** JSON text with object keys sorted: map entries compare whatever their order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : x,
  );
}
/** The same message as the original: the same canonical JSON (map order aside; NaN and -0 kept). */
function same(m: Message, i: number): boolean {
  return canonical(toJson(Everything, m)) === originals[i];
}

let sameTo = 0;
let sameOptions = 0;
let gwBack = 0;
let esBack = 0;
const texts: string[] = [];
for (let i = 0; i < N; i++) {
  const decoded = pjType.decode(bytes[i]!) as unknown as Record<string, unknown>;
  const gw = messageToJson(pjType, decoded, marshal) as Record<string, unknown>;
  const es = toJson(Everything, messages[i]!) as Record<string, unknown>;
  if (compareJson(gw, es)) sameTo++;
  // The other marshal options, each with its protobuf-es counterpart.
  const gwAll = messageToJson(pjType, decoded, {
    useProtoNames: true,
    emitUnpopulated: true,
    useEnumNumbers: true,
  }) as Record<string, unknown>;
  const esAll = toJson(Everything, messages[i]!, {
    useProtoFieldName: true,
    alwaysEmitImplicit: true,
    enumAsInteger: true,
  }) as Record<string, unknown>;
  if (compareJson(gwAll, esAll, 'to JSON, proto names + unpopulated + enum numbers')) sameOptions++;
  const text = JSON.stringify(es);
  texts.push(text);
  // From JSON, both ways, against the original.
  try {
    const plain = jsonToPlain(pjType, JSON.parse(text), false) as Record<string, unknown>;
    const back = fromBinary(Everything, pjType.encode(pjType.fromObject(plain)).finish());
    if (same(back, i)) gwBack++;
    else note('from JSON (gateway): not the original', text.slice(0, 160));
  } catch (err) {
    note(`from JSON (gateway) threw: ${(err as Error).message.slice(0, 80)}`, text.slice(0, 160));
  }
  try {
    const back = fromJson(Everything, JSON.parse(text) as JsonValue);
    if (same(back, i)) esBack++;
    else {
      const a = JSON.parse(originals[i]!) as Record<string, unknown>;
      const b = JSON.parse(canonical(toJson(Everything, back))) as Record<string, unknown>;
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
        (k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]),
      );
      note(
        `from JSON (protobuf-es): not the original in ${keys.join(', ')}`,
        keys.map((k) => `${JSON.stringify(a[k])} → ${JSON.stringify(b[k])}`).join('; '),
      );
    }
  } catch (err) {
    note(
      `from JSON (protobuf-es) threw: ${(err as Error).message.slice(0, 80)}`,
      text.slice(0, 160),
    );
  }
}

// ------------------------------------------------------------------ time per message

function time(fn: (i: number) => unknown): number {
  for (let i = 0; i < N; i++) fn(i);
  const rounds = 5;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (let i = 0; i < N; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / 1000 / (rounds * N);
}
const decodedAll = bytes.map((b) => pjType.decode(b) as unknown as Record<string, unknown>);
const esAll = messages;
const gwTo = time((i) => JSON.stringify(messageToJson(pjType, decodedAll[i]!, marshal)));
const esTo = time((i) => JSON.stringify(toJson(Everything, esAll[i]!)));
const gwFrom = time((i) =>
  pjType
    .encode(
      pjType.fromObject(
        jsonToPlain(pjType, JSON.parse(texts[i]!), false) as Record<string, unknown>,
      ),
    )
    .finish(),
);
const esFrom = time((i) =>
  toBinary(Everything, fromJson(Everything, JSON.parse(texts[i]!) as JsonValue)),
);

const load = os.loadavg()[0]!.toFixed(1);
console.log(
  `> ${N} random conformance.v1.Everything messages (seed ${process.argv[3] ?? 1}), Node ${process.version}, load average ${load}`,
);
console.log('');
console.log('| | gateway (json.ts over protobufjs) | @bufbuild/protobuf |');
console.log('|---|---:|---:|');
console.log(`| to JSON identical to the other | ${sameTo} of ${N} | |`);
console.log(
  `| the same with useProtoNames, emitUnpopulated, useEnumNumbers (protobuf-es: useProtoFieldName, alwaysEmitImplicit, enumAsInteger) | ${sameOptions} of ${N} | |`,
);
console.log(
  `| from JSON (protobuf-es's text) back to the original | ${gwBack} of ${N} | ${esBack} of ${N} |`,
);
console.log(
  `| to JSON text, µs per message | ${gwTo.toFixed(1)} (from a protobufjs message) | ${esTo.toFixed(1)} |`,
);
console.log(
  `| JSON text to binary, µs per message | ${gwFrom.toFixed(1)} | ${esFrom.toFixed(1)} |`,
);
console.log('');
if (diffs.size === 0) console.log('No difference.');
else {
  console.log('| difference | messages | example |');
  console.log('|---|---:|---|');
  for (const [k, d] of [...diffs].sort((a, b) => b[1].count - a[1].count))
    console.log(
      `| ${k} | ${d.count} | \`${d.example.replace(/\|/g, '\\|').replace(/`/g, "'")}\` |`,
    );
}
void protobuf;
