import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { loadSync } from '@grpc/proto-loader';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { rootOfFiles } from '@svcboot/openapi';
import { descriptorsOf, rootFromDefinitions } from '../../grpc-server/src/descriptors.js';
import { conformanceProto, testdata } from './conformance/test-support/harness.js';
import { jsonToPlain, messageToJson } from '../../grpc-server/src/protojson/json.js';

// Schemas rebuilt from descriptors (a service known only by its proto-loader definition;
// protos.descriptorSets and generated code's files, through @svcboot/openapi's rootOfFiles):
// protobufjs's fromDescriptor leaves a map as the repeated `…Entry` message of the wire format.
const pkg = loadSync(conformanceProto, { includeDirs: [testdata], keepCase: true });
const definition = pkg['conformance.v1.Conformance'] as ServiceDefinition;
describe.each([
  ['rootFromDefinitions (proto-loader definitions)', () => rootFromDefinitions([definition])!],
  [
    'rootOfFiles (descriptor sets, generated code)',
    () =>
      rootOfFiles(
        descriptorsOf(definition).map((bytes) => ({
          name: fromBinary(FileDescriptorProtoSchema, bytes).name,
          bytes,
          source: 'proto-loader',
        })),
        'test',
      ),
  ],
])('%s', (_name, build) => {
  const root = build();
  const type = root.lookupType('conformance.v1.MapKeys');

  it('map fields are maps again, with their key and value types, and no entry types are left', () => {
    const f = (n: string) => type.fields[n] as unknown as protobuf.MapField;
    expect([f('int64_keys').map, f('int64_keys').keyType, f('int64_keys').type]).toEqual([
      true,
      'int64',
      'string',
    ]);
    expect([f('nested').keyType, f('nested').resolvedType]).toEqual(['sint64', type]);
    expect(type.nestedArray).toEqual([]);
  });

  it('the JSON mapping on it writes maps as objects with protojson keys (protojson marshalMap)', () => {
    const json = {
      int64Keys: { '-1': 'value' },
      boolKeys: { false: 'no' },
      nested: { '-5': { uint64Keys: { '18446744073709551615': 'max' } } },
    };
    const plain = jsonToPlain(type, json, false) as Record<string, unknown>;
    const bytes = type.encode(type.fromObject(plain)).finish();
    const decoded = type.decode(bytes) as unknown as Record<string, unknown>;
    const o = { useProtoNames: false, emitUnpopulated: false, useEnumNumbers: false };
    expect(messageToJson(type, decoded, o)).toEqual(json);
  });
});
