import {
  createFileRegistry,
  createRegistry,
  fromJson,
  type DescFile,
  type DescService,
  type JsonValue,
} from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { file_buf_validate_validate } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import { file_google_api_annotations } from './gen/google/api/annotations_pb.js';

/**
 * shelf/v1/shelf.proto with ten `buf.validate` rules, as the FileDescriptorProto protoc would
 * write for it (its JSON form; the rules and the HTTP binding as option extensions):
 *
 *   message CreateShelfRequest {
 *     string name = 1        [(buf.validate.field).string = {min_len: 1, max_len: 20}];
 *     string email = 2       [(buf.validate.field).string.email = true];
 *     string id = 3          [(buf.validate.field).string.uuid = true];
 *     int32 capacity = 4     [(buf.validate.field).int32 = {gte: 1, lte: 100}];
 *     repeated string tags = 5 [(buf.validate.field).repeated = {max_items: 3, items: {string: {min_len: 2}}}];
 *     string code = 6        [(buf.validate.field).string.pattern = "^[A-Z]{3}$"];
 *     double price = 7       [(buf.validate.field).double = {gt: 0}];
 *     string owner = 8       [(buf.validate.field).required = true];
 *     string website = 9     [(buf.validate.field).string.uri = true];
 *     int64 floor = 10       [(buf.validate.field).int64 = {gte: 0, lte: 50}];
 *   }
 *   message Shelf { string name = 1; int32 capacity = 2; }
 *   service Shelves {
 *     rpc CreateShelf(CreateShelfRequest) returns (Shelf) { option (google.api.http) = {post: "/v1/shelves" body: "*"}; }
 *     rpc ImportShelves(stream CreateShelfRequest) returns (Shelf);
 *   }
 */
const field = (name: string, number: number, type: string, rules: JsonValue, repeated = false) => ({
  name,
  number,
  label: repeated ? 'LABEL_REPEATED' : 'LABEL_OPTIONAL',
  type,
  jsonName: name,
  options: { '[buf.validate.field]': rules },
});

const registry = createRegistry(file_buf_validate_validate, file_google_api_annotations);
/** The imported files, and theirs, by name. */
const imported = new Map<string, DescFile>();
const pending = [file_buf_validate_validate, file_google_api_annotations];
for (let f = pending.pop(); f; f = pending.pop()) {
  imported.set(f.proto.name, f);
  pending.push(...f.dependencies);
}
const proto = fromJson(
  FileDescriptorProtoSchema,
  {
    name: 'shelf/v1/shelf.proto',
    package: 'shelf.v1',
    dependency: ['buf/validate/validate.proto', 'google/api/annotations.proto'],
    syntax: 'proto3',
    messageType: [
      {
        name: 'CreateShelfRequest',
        field: [
          field('name', 1, 'TYPE_STRING', { string: { minLen: '1', maxLen: '20' } }),
          field('email', 2, 'TYPE_STRING', { string: { email: true } }),
          field('id', 3, 'TYPE_STRING', { string: { uuid: true } }),
          field('capacity', 4, 'TYPE_INT32', { int32: { gte: 1, lte: 100 } }),
          field(
            'tags',
            5,
            'TYPE_STRING',
            { repeated: { maxItems: '3', items: { string: { minLen: '2' } } } },
            true,
          ),
          field('code', 6, 'TYPE_STRING', { string: { pattern: '^[A-Z]{3}$' } }),
          field('price', 7, 'TYPE_DOUBLE', { double: { gt: 0 } }),
          field('owner', 8, 'TYPE_STRING', { required: true }),
          field('website', 9, 'TYPE_STRING', { string: { uri: true } }),
          field('floor', 10, 'TYPE_INT64', { int64: { gte: '0', lte: '50' } }),
        ],
      },
      {
        name: 'Shelf',
        field: [
          {
            name: 'name',
            number: 1,
            label: 'LABEL_OPTIONAL',
            type: 'TYPE_STRING',
            jsonName: 'name',
          },
          {
            name: 'capacity',
            number: 2,
            label: 'LABEL_OPTIONAL',
            type: 'TYPE_INT32',
            jsonName: 'capacity',
          },
        ],
      },
    ],
    service: [
      {
        name: 'Shelves',
        method: [
          {
            name: 'CreateShelf',
            inputType: '.shelf.v1.CreateShelfRequest',
            outputType: '.shelf.v1.Shelf',
            options: { '[google.api.http]': { post: '/v1/shelves', body: '*' } },
          },
          {
            name: 'ImportShelves',
            inputType: '.shelf.v1.CreateShelfRequest',
            outputType: '.shelf.v1.Shelf',
            clientStreaming: true,
          },
        ],
      },
    ],
  },
  { registry },
);

const files = createFileRegistry(proto, (name) => imported.get(name));
/** The Shelves service, a descriptor as generated code has it (file, imports, options). */
export const Shelves: DescService = files.getService('shelf.v1.Shelves')!;
export const CreateShelfRequestSchema = files.getMessage('shelf.v1.CreateShelfRequest')!;

/** A request every rule accepts. */
export const VALID_SHELF = {
  name: 'fiction',
  email: 'ann@example.com',
  id: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  capacity: 40,
  tags: ['sf', 'classic'],
  code: 'FIC',
  price: 9.5,
  owner: 'ann',
  website: 'https://example.com/shelves/fiction',
  floor: 2n,
};
