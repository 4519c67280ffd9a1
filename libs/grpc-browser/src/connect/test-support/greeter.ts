import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Metadata,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { encodeStatusDetails } from '@svcboot/grpc-server/protocol';

/** The directory of the Connect tests' protos, and the Greeter's file in it. */
export const greeterProtoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'proto');
export const greeterProto = path.join(greeterProtoDir, 'connecttest/v1/greeter.proto');

/**
 * A config with a grpc entry `api` that serves the Greeter's proto with Connect on, a quiet logger
 * and JSON records to the file `events`; `extra` is more lines of the entry's options.
 */
export function greeterConfig(appName: string, events: string, extra = ''): string {
  return `app: { name: ${appName} }
logger: [{ name: quiet, level: warn }]
event: [{ name: records, encoding: json, outputPaths: ["${events}"] }]
grpc:
  - name: api
    port: 0
    loggerEntry: quiet
    eventEntry: records
    generateUnboundMethods: true
    connect: { enabled: true }
    protos: { files: ["${greeterProto}"], includeDirs: ["${greeterProtoDir}"] }
${extra}`;
}

/** The Greeter as users load a service: proto-loader, no generated code. */
export function greeterDefinition(): ServiceDefinition {
  const pkg = loadSync(greeterProto, { includeDirs: [greeterProtoDir], longs: String });
  return pkg['connecttest.v1.Greeter'] as ServiceDefinition;
}

type Req = Record<string, unknown>;
let hintType: protobuf.Type | undefined;

/** A connecttest.v1.Hint's bytes, as an error detail. */
function hint(field: string, reason: string): Uint8Array {
  hintType ??= protobuf.loadSync(greeterProto).lookupType('connecttest.v1.Hint');
  return hintType.encode(hintType.fromObject({ field, reason })).finish();
}

/** The Greeter's handlers (grpc-js style). */
export const greeterImplementation = {
  Say(call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) {
    const md = new Metadata();
    md.set('x-greeting', 'hello');
    const custom = call.metadata.get('x-custom')[0];
    if (custom !== undefined) md.set('x-custom-seen', String(custom));
    call.sendMetadata(md);
    const trailer = new Metadata();
    trailer.set('x-done', 'yes');
    cb(null, { text: `hello ${String(call.request['text'])}`, big: call.request['big'] }, trailer);
  },
  Get(call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) {
    cb(null, { text: `got ${String(call.request['text'])}` });
  },
  Fail(call: ServerUnaryCall<Req, unknown>, cb: sendUnaryData<unknown>) {
    const code = Number(call.request['code']);
    const message = String(call.request['message'] ?? '');
    const md = new Metadata();
    md.set('x-fail-reason', 'asked');
    md.set(
      'grpc-status-details-bin',
      encodeStatusDetails(code, message, [
        { typeUrl: 'type.googleapis.com/connecttest.v1.Hint', value: hint('code', 'asked for') },
      ]),
    );
    cb({ code, details: message, metadata: md });
  },
  Wait(call: ServerUnaryCall<Req, unknown>) {
    call.on('cancelled', () => undefined);
  },
  Count(call: ServerWritableStream<Req, unknown>) {
    const n = Number(call.request['n'] ?? 0);
    const failCode = Number(call.request['failCode'] ?? 0);
    for (let i = 0; i < n; i++) call.write({ text: `#${i}` });
    if (failCode !== 0) {
      const md = new Metadata();
      md.set('x-why', 'asked');
      call.emit('error', { code: failCode, details: 'count failed', metadata: md });
      return;
    }
    const trailer = new Metadata();
    trailer.set('x-total', String(n));
    call.end(trailer);
  },
  Join(call: ServerReadableStream<Req, unknown>, cb: sendUnaryData<unknown>) {
    const texts: string[] = [];
    call.on('data', (m: Req) => texts.push(String(m['text'])));
    call.on('end', () => cb(null, { text: texts.join('+') }));
  },
  Chat(call: ServerDuplexStream<Req, unknown>) {
    call.on('data', (m: Req) => call.write({ text: `echo ${String(m['text'])}` }));
    call.on('end', () => call.end());
  },
} as unknown as UntypedServiceImplementation;
