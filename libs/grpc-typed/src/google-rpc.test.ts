import {
  create,
  toBinary,
  type DescFile,
  type DescMessage,
  type Message,
} from '@bufbuild/protobuf';
import { fileDesc, messageDesc, type GenMessage } from '@bufbuild/protobuf/codegenv2';
import { base64Encode } from '@bufbuild/protobuf/wire';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  anyPack,
  anyUnpack,
} from '@bufbuild/protobuf/wkt';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as generatedDetails from './gen/google/rpc/error_details_pb.js';
import * as generatedStatus from './gen/google/rpc/status_pb.js';
import * as lazy from './google-rpc.js';
import { standardDetails } from './error.js';
import * as index from './index.js';

const fileBytes = (file: DescFile) => toBinary(FileDescriptorProtoSchema, file.proto);

const generated: Record<string, unknown> = { ...generatedDetails, ...generatedStatus };
const schemaNames = Object.keys(generated).filter((k) => k.endsWith('Schema'));

describe('google.rpc descriptors made on first use', () => {
  it('are the generated files: the same serialized FileDescriptorProtos', () => {
    expect(fileBytes(lazy.file_google_rpc_status)).toEqual(
      fileBytes(generatedStatus.file_google_rpc_status),
    );
    expect(fileBytes(lazy.file_google_rpc_error_details)).toEqual(
      fileBytes(generatedDetails.file_google_rpc_error_details),
    );
  });

  it('export every value the generated modules export, each the same message, from the index too', () => {
    expect(schemaNames.length).toBe(15);
    const values = Object.keys(lazy).sort();
    expect(values).toEqual(Object.keys(generated).sort());
    for (const name of schemaNames) {
      const made = (lazy as unknown as Record<string, DescMessage>)[name]!;
      const gen = generated[name] as DescMessage;
      expect(made.typeName, name).toBe(gen.typeName);
      expect(
        made.fields.map((f) => [f.name, f.number, f.fieldKind]),
        name,
      ).toEqual(gen.fields.map((f) => [f.name, f.number, f.fieldKind]));
      expect((index as Record<string, unknown>)[name], name).toBe(made);
    }
  });

  it('work with protobuf-es as the descriptors do: create, binary, Any, `in`, keys', () => {
    const info = create(lazy.ErrorInfoSchema, { reason: 'R', metadata: { k: 'v' } });
    expect(toBinary(lazy.ErrorInfoSchema, info)).toEqual(
      toBinary(generatedDetails.ErrorInfoSchema, create(generatedDetails.ErrorInfoSchema, info)),
    );
    const any = anyPack(lazy.ErrorInfoSchema, info);
    expect(anyUnpack(any, generatedDetails.ErrorInfoSchema)?.metadata).toEqual({ k: 'v' });
    expect(anyUnpack(any, standardDetails)).toMatchObject({ reason: 'R' });
    expect('typeName' in lazy.StatusSchema).toBe(true);
    expect(Object.keys(lazy.StatusSchema)).toEqual(Object.keys(generatedStatus.StatusSchema));
    expect({ ...lazy.HelpSchema }.typeName).toBe('google.rpc.Help');
    expect(inspect(lazy.HelpSchema, { depth: 0 })).toBe(
      inspect(generatedDetails.HelpSchema, { depth: 0 }),
    );
    expect(standardDetails.getMessage('google.rpc.BadRequest')?.typeName).toBe(
      'google.rpc.BadRequest',
    );
  });

  it('serve as a dependency of generated code (fileDesc), whose fields then use their messages', () => {
    const proto = create(FileDescriptorProtoSchema, {
      name: 'user/v1/failure.proto',
      package: 'user.v1',
      dependency: ['google/rpc/error_details.proto'],
      syntax: 'proto3',
      messageType: [
        {
          name: 'Failure',
          field: [
            {
              name: 'info',
              number: 1,
              label: FieldDescriptorProto_Label.OPTIONAL,
              type: FieldDescriptorProto_Type.MESSAGE,
              typeName: '.google.rpc.ErrorInfo',
              jsonName: 'info',
            },
          ],
        },
      ],
    });
    const file = fileDesc(base64Encode(toBinary(FileDescriptorProtoSchema, proto), 'std_raw'), [
      lazy.file_google_rpc_error_details,
    ]);
    const failure = messageDesc(file, 0) as GenMessage<
      Message<'user.v1.Failure'> & { info?: lazy.ErrorInfo }
    >;
    expect(failure.fields[0]?.message?.typeName).toBe('google.rpc.ErrorInfo');
    const bytes = toBinary(failure, create(failure, { info: { reason: 'R' } }));
    expect(bytes).toEqual(new Uint8Array([0x0a, 0x03, 0x0a, 0x01, 0x52]));
  });
});
