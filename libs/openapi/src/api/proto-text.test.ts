import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { loadProtoRoot } from './protos.js';
import { ProtoTextError, normalizeProtoText, protocString } from './proto-text.js';

const require = createRequire(import.meta.url);

const parse = (text: string): protobuf.Root =>
  protobuf.parse(text, { keepCase: true, alternateCommentMode: true }).root;

const head = `syntax = "proto3";
package t;
import "google/protobuf/descriptor.proto";
message Rule { string get = 1; string body = 2; repeated Rule more = 3; repeated string tags = 4; int32 n = 5; }
extend google.protobuf.MethodOptions { Rule rule = 50000; }
message M {}
`;
const service = (value: string) => `${head}service S {
  rpc A(M) returns (M) {
    option (rule) = ${value};
  }
}
// after
message After {}
`;
const optionsOf = (text: string) =>
  parse(normalizeProtoText(text)).lookupService('t.S').methods['A']!.parsedOptions;

describe('normalizeProtoText: aggregate option values as protoc reads them (text format)', () => {
  it('a list of messages, `< >` and an empty list read as the field repeated, as the same value written as blocks', () => {
    const lists = optionsOf(
      service(`{
      get: "/a"
      more: [{get: "/b"}, <get: "/c" body: "*">]
      more: []
      tags: ["x", 'y']
      more {get: "/d"}
    }`),
    );
    const blocks = parse(
      service(
        `{ get: "/a" more {get: "/b"} more {get: "/c" body: "*"} tags: ["x", "y"] more {get: "/d"} }`,
      ),
    ).lookupService('t.S').methods['A']!.parsedOptions;
    expect(lists).toEqual(blocks);
    expect(lists).toEqual([
      {
        '(rule)': {
          get: '/a',
          more: [{ get: '/b' }, { get: '/c', body: '*' }, { get: '/d' }],
          tags: ['x', 'y'],
        },
      },
    ]);
  });

  it('a field named by an extension or a type URL is left out; negative numbers and identifiers stay', () => {
    expect(
      optionsOf(service('{ [t.other]: 1 n: -5 [type.googleapis.com/t.M] { } get: "x" }')),
    ).toEqual([{ '(rule)': { n: -5, get: 'x' } }]);
  });

  it('every line keeps its number: comments before later declarations stay theirs', () => {
    const text = service(`{
      // inside
      more: [
        {get: "/b"},
        {get: "/c"}
      ]
    }`);
    const out = normalizeProtoText(text);
    expect(out.split('\n').length).toBe(text.split('\n').length);
    expect(parse(out).lookupType('t.After').comment).toBe('after');
  });

  it('a value that does not end says where it starts', () => {
    expect(() => normalizeProtoText(service('{ get: "/a" more: [{get: "/b"}'))).toThrow(
      ProtoTextError,
    );
    expect(() => normalizeProtoText(service('{ get "/a" }'))).toThrow(/line 9/);
  });

  it('a file with nothing to rewrite is returned as it is', () => {
    const text = `${head}service S { rpc A(M) returns (M); }\n`;
    expect(normalizeProtoText(text)).toBe(text);
  });
});

describe('string literals as protoc reads them (C escapes, then UTF-8)', () => {
  it('reads each escape protoc reads', () => {
    expect(protocString(String.raw`"\a\b\f\n\r\t\v\\\'\"\?"`)).toBe('\x07\b\f\n\r\t\v\\\'"?');
    expect(protocString(String.raw`"\101\102\0x"`)).toBe('AB\0x');
    expect(protocString(String.raw`"\x41\x4a\xc3\xa9"`)).toBe('AJé');
    expect(protocString(String.raw`'\u00e9\U0001F600'`)).toBe('é😀');
  });

  it('protobufjs reads the rewritten literal as the same string, quotes and backslashes included', () => {
    const text = `${head}service S { rpc A(M) returns (M) { option (rule) = { get: "a\\"b\\\\c\\x41\\n" body: 'it\\'s' "\\042" }; } }\n`;
    expect(optionsOf(text)).toEqual([{ '(rule)': { get: 'a"b\\cA\n', body: 'it\'s"' } }]);
  });
});

// googleapis's protos as npm ships them (google-proto-files): each loads with the pass as with
// protobufjs alone, to the same schema (they have no construct protobufjs misreads).
describe('googleapis protos from npm', () => {
  const base = path.dirname(require.resolve('google-proto-files/package.json'));
  const dirs = ['google/api', 'google/rpc', 'google/type', 'google/longrunning', 'google/iam/v1'];
  const files = dirs.flatMap((d) =>
    readdirSync(path.join(base, d))
      .filter((f) => f.endsWith('.proto'))
      .map((f) => `${d}/${f}`),
  );

  it(`${files.length} files load to the schema protobufjs's own loader gives`, () => {
    expect(files.length).toBeGreaterThan(40);
    const ours = loadProtoRoot(files, [base], base);
    const theirs = new protobuf.Root();
    theirs.resolvePath = (_origin, target) =>
      path.isAbsolute(target) ? target : path.join(base, target);
    theirs.loadSync(files, { keepCase: true, alternateCommentMode: true });
    expect(ours.toJSON({ keepComments: true })).toEqual(theirs.toJSON({ keepComments: true }));
  });
});
