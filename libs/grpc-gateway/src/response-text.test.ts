import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot, type App } from '@svcboot/entry-core';
import { afterAll, describe, expect, it } from 'vitest';
import { grpcEntry } from '../../grpc-server/src/index.js';

// A flat response type's body is written field by field (response-fast.ts flatJson) rather than
// as protojson's tree and JSON.stringify: the bytes a real HTTP client reads, and their
// Content-Length, are protojson's, for each marshal setting.
const PROTO = `
syntax = "proto3";
package flat.v1;
message Which { string name = 1; }
message Flat {
  string display_name = 1 [json_name = "label"]; bool on = 2; int32 count = 3; uint32 big = 4;
  sint32 neg = 5; string note_text = 6;
}
service Flats { rpc Get(Which) returns (Flat); }
`;
const MAPPING = `type: google.api.Service
config_version: 3
http:
  rules:
    - selector: flat.v1.Flats.Get
      get: /v1/flat/{name}
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'response-text-'));
const protoFile = path.join(dir, 'flat.proto');
const mappingFile = path.join(dir, 'mapping.yaml');
writeFileSync(protoFile, PROTO);
writeFileSync(mappingFile, MAPPING);
const definition = loadSync(protoFile)['flat.v1.Flats'] as ServiceDefinition;

/** What the handler answers for each path name: values as handlers return them, odd ones too. */
const REPLIES: Record<string, Record<string, unknown>> = {
  full: {
    displayName: 'a "quoted" \\ name\u2028 é 😀\n',
    on: true,
    count: -7,
    big: 4294967295,
    neg: -2147483648,
    noteText: '<b>&</b>',
  },
  empty: {},
  defaults: { displayName: '', on: false, count: 0, big: 0, neg: 0, noteText: '' },
  coerced: { displayName: 12, on: 1, count: '42', big: -1, neg: 2.9, noteText: null },
  extra: { displayName: 'x', not_a_field: 'y' },
};

const apps: App[] = [];
afterAll(async () => {
  for (const app of apps) await app.shutdown('test');
  rmSync(dir, { recursive: true, force: true });
});

async function start(gwYaml: string): Promise<number> {
  const app = await boot({
    argv: [],
    cwd: dir,
    configText: `app:
  name: flat
  version: 1.0.0
logger:
  - name: quiet
    level: warn
grpc:
  - name: flat
    port: 0
    loggerEntry: quiet
    protos:
      files: ["${protoFile}"]
    gwMappingFiles: ["${mappingFile}"]
${gwYaml}`,
  });
  apps.push(app);
  const entry = grpcEntry(app, 'flat');
  entry.addService(definition, {
    Get: (call: { request: { name: string } }, cb: sendUnaryData<unknown>) =>
      cb(null, REPLIES[call.request.name]),
  });
  await app.bootstrap();
  return entry.port;
}

function get(port: number, name: string): Promise<{ body: Buffer; length: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: `/v1/flat/${name}`, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ body: Buffer.concat(chunks), length: res.headers['content-length'] })
            : reject(new Error(`${res.statusCode} ${Buffer.concat(chunks).toString()}`)),
        );
      })
      .on('error', reject);
  });
}

const FULL_JSON =
  '"a \\"quoted\\" \\\\ name\u2028 é 😀\\n","on":true,"count":-7,"big":4294967295,"neg":-2147483648,';

describe.each([
  {
    setting: 'protojson defaults',
    yaml: '',
    expected: {
      full: `{"label":${FULL_JSON}"noteText":"<b>&</b>"}`,
      empty: '{}',
      defaults: '{}',
      coerced: '{"label":"12","on":true,"count":42,"big":4294967295,"neg":2}',
      extra: '{"label":"x"}',
    },
  },
  {
    setting: 'useProtoNames and emitUnpopulated',
    yaml: '    gwOption: { marshal: { useProtoNames: true, emitUnpopulated: true } }\n',
    expected: {
      full: `{"display_name":${FULL_JSON}"note_text":"<b>&</b>"}`,
      empty: '{"display_name":"","on":false,"count":0,"big":0,"neg":0,"note_text":""}',
      defaults: '{"display_name":"","on":false,"count":0,"big":0,"neg":0,"note_text":""}',
      coerced: '{"display_name":"12","on":true,"count":42,"big":4294967295,"neg":2,"note_text":""}',
      extra: '{"display_name":"x","on":false,"count":0,"big":0,"neg":0,"note_text":""}',
    },
  },
  {
    setting: 'the svc style (emitUnpopulated, JSON names)',
    yaml: '    enableSvcGwOption: true\n',
    expected: {
      full: `{"label":${FULL_JSON}"noteText":"<b>&</b>"}`,
      empty: '{"label":"","on":false,"count":0,"big":0,"neg":0,"noteText":""}',
      defaults: '{"label":"","on":false,"count":0,"big":0,"neg":0,"noteText":""}',
      coerced: '{"label":"12","on":true,"count":42,"big":4294967295,"neg":2,"noteText":""}',
      extra: '{"label":"x","on":false,"count":0,"big":0,"neg":0,"noteText":""}',
    },
  },
])('a flat response over HTTP/1.1, $setting', ({ yaml, expected }) => {
  it('has protojson bytes and their Content-Length', async () => {
    const port = await start(yaml);
    for (const [name, text] of Object.entries(expected)) {
      const { body, length } = await get(port, name);
      expect(body.toString('utf8'), name).toBe(text);
      expect(Number(length), name).toBe(Buffer.byteLength(text));
    }
  });
});

describe('a flat response with an indent', () => {
  it('is protojson indented (the tree and JSON.stringify)', async () => {
    const port = await start("    gwOption: { marshal: { indent: '  ' } }\n");
    const { body } = await get(port, 'coerced');
    expect(body.toString('utf8')).toBe(
      '{\n  "label": "12",\n  "on": true,\n  "count": 42,\n  "big": 4294967295,\n  "neg": 2\n}',
    );
  });
});
