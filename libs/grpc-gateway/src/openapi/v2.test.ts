import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { sourceOf } from '../../../grpc-server/src/test-support/openapi-source.js';
import { buildOpenApiV2, type OpenApiDocument } from '@svcboot/openapi';

const testdata = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testdata');

/**
 * Expected documents: written from protoc-gen-openapiv2's template.go rules (naming, parameter
 * and schema derivation, option handling) for these protos, each value checked against them.
 */
function golden(name: string): OpenApiDocument {
  return JSON.parse(readFileSync(path.join(testdata, name), 'utf8')) as OpenApiDocument;
}

async function expectValid(doc: OpenApiDocument): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  if (!result.valid) throw new Error(`not a valid OpenAPI document:\n${compileErrors(result)}`);
  expect(result.specification).toBe('Swagger');
}

const shapes = () =>
  buildOpenApiV2(
    sourceOf(['test/openapi/shapes.proto'], ['test.openapi.Catalog', 'test.openapi.Unbound']),
  );
const annotated = () =>
  buildOpenApiV2(sourceOf(['test/openapi/annotated.proto'], ['test.annotated.v1.OrderService']));
const library = () => buildOpenApiV2(sourceOf(['test/v1/library.proto'], ['test.v1.Library']));

type Op = {
  operationId: string;
  parameters?: Array<Record<string, unknown>>;
  responses: Record<string, { description: string; schema: Record<string, unknown> }>;
} & Record<string, unknown>;
const op = (doc: OpenApiDocument, p: string, m: string): Op =>
  (doc['paths'] as Record<string, Record<string, Op>>)[p]![m]!;
const defs = (doc: OpenApiDocument): Record<string, Record<string, unknown>> =>
  doc['definitions'] as Record<string, Record<string, unknown>>;

describe('OpenAPI v2 as protoc-gen-openapiv2 writes it', () => {
  it('matches the expected documents and every one passes an OpenAPI 2.0 validator', async () => {
    for (const [name, build] of [
      ['shapes', shapes],
      ['annotated', annotated],
      ['library', library],
    ] as const) {
      const doc = build();
      expect(doc, name).toEqual(golden(`${name}.swagger.json`));
      await expectValid(doc);
    }
  });

  it('names paths, path parameters and operations as grpc-gateway does', () => {
    const doc = shapes();
    const get = op(doc, '/v1/{name}', 'get');
    expect(get.operationId).toBe('Catalog_GetItem');
    expect(get.parameters![0]).toEqual({
      name: 'name',
      in: 'path',
      required: true,
      type: 'string',
      pattern: 'shelves/[^/]+/items/[^/]+',
    });
    // The additional binding: a numeric suffix; the next method on the same path and verb: `{name_1}`.
    expect(op(doc, '/v1/items/{name}', 'get').operationId).toBe('Catalog_GetItem2');
    expect(op(doc, '/v1/items/{name_1}', 'get').operationId).toBe('Catalog_GetOther');
    expect(op(doc, '/v1/items/{item.itemId}', 'patch').parameters![0]!['name']).toBe('item.itemId');
    expect(op(doc, '/v1:touch', 'post').operationId).toBe('Catalog_Touch');
    // method_visibility INTERNAL without the selector: left out.
    expect(Object.keys(doc['paths'] as object)).not.toContain('/v1/hidden/{name}');
    expect(get.summary).toBe('Gets one item.');
    expect(get.description).toBe('Looks the item up by its resource name.');
  });

  it('lists query parameters for every field not bound by path or body', () => {
    const params = op(shapes(), '/v1/items', 'get').parameters!;
    const byName = new Map(params.map((p) => [p['name'], p]));
    expect([...byName.keys()]).toEqual([
      'pageSize',
      'pageToken',
      'kind',
      'kinds',
      'tags',
      'ids',
      'filter.text',
      'filter.range.min',
      'filter.range.max',
      'filter.kinds',
      'attrs',
      'byName',
      'byNumber',
      'since',
      'within',
      'note',
      'limit',
      'readMask',
      'ratio',
      'deep',
      'token',
      'maybe',
      'must',
      'times',
    ]);
    expect(byName.get('kind')).toEqual({
      name: 'kind',
      in: 'query',
      required: false,
      type: 'string',
      enum: ['KIND_UNSPECIFIED', 'HANDMADE', 'MACHINE'],
      default: 'KIND_UNSPECIFIED',
      description: ' - KIND_UNSPECIFIED: Not set.\n - HANDMADE: Made by hand.',
    });
    expect(byName.get('ids')).toEqual({
      name: 'ids',
      in: 'query',
      required: false,
      type: 'array',
      items: { type: 'string', format: 'int64' },
      collectionFormat: 'multi',
    });
    expect(byName.get('attrs')).toEqual({
      name: 'attrs',
      in: 'query',
      required: false,
      type: 'string',
    });
    expect(byName.get('since')).toEqual({
      name: 'since',
      in: 'query',
      required: false,
      type: 'string',
      format: 'date-time',
    });
    expect(byName.get('must')!['required']).toBe(true);
    // Repeated messages and ListValue (arrays of objects) are not query parameters; nor is a hidden
    // field; nor (unlike protoc-gen-openapiv2, whose output Swagger 2.0 rejects there) maps of
    // messages and Struct.
    for (const absent of ['windows', 'values', 'secret', 'ranges', 'meta'])
      expect(byName.has(absent), absent).toBe(false);
    // A body field leaves only the rest; PATCH with a body field hides update_mask.
    expect(
      op(shapes(), '/v1/items/{item.itemId}', 'patch').parameters!.map((p) => p['in']),
    ).toEqual(['path', 'body']);
  });

  it('writes bodies, response bodies, streams, well-known types and the default error', () => {
    const doc = shapes();
    expect(op(doc, '/v1/shelves/{shelfId}/items', 'post').parameters![1]).toEqual({
      name: 'body',
      in: 'body',
      required: true,
      schema: { $ref: '#/definitions/CatalogCreateItemBody' },
    });
    expect(defs(doc)['CatalogCreateItemBody']).toEqual({
      type: 'object',
      properties: { item: { $ref: '#/definitions/openapiItem' }, requestId: { type: 'string' } },
      required: ['item'],
    });
    expect(op(doc, '/v1/items/{name}/labels', 'get').responses['200']).toEqual({
      description: '',
      schema: { type: 'object', additionalProperties: { type: 'string' } },
    });
    expect(op(doc, '/v1/shelves/{shelfId}:watch', 'get').responses['200']).toEqual({
      description: 'A successful response.(streaming responses)',
      schema: {
        type: 'object',
        title: 'Stream result of openapiItem',
        properties: {
          result: { $ref: '#/definitions/openapiItem' },
          error: { $ref: '#/definitions/rpcStatus' },
        },
      },
    });
    expect(op(doc, '/v1:touch', 'post').responses['200']!.schema).toEqual({
      type: 'object',
      properties: {},
    });
    const res = defs(doc)['openapiListItemsResponse']!['properties'] as Record<string, unknown>;
    expect(res['extra']).toEqual({ $ref: '#/definitions/protobufAny' });
    expect(res['value']).toEqual({});
    expect(res['struct']).toEqual({ type: 'object' });
    expect(res['list']).toEqual({ type: 'array', items: { type: 'object' } });
    expect(res['u32']).toEqual({ type: 'integer', format: 'int64' });
    expect(res['byNumber']).toEqual({
      type: 'object',
      additionalProperties: { $ref: '#/definitions/openapiItem' },
    });
    expect(defs(doc)['rpcStatus']!['properties']).toEqual({
      code: { type: 'integer', format: 'int32' },
      message: { type: 'string' },
      details: { type: 'array', items: { type: 'object', $ref: '#/definitions/protobufAny' } },
    });
    expect(defs(doc)['protobufAny']).toEqual({
      type: 'object',
      properties: { '@type': { type: 'string' } },
      additionalProperties: {},
    });
    expect(defs(doc)['openapiKind']).toEqual({
      type: 'string',
      enum: ['KIND_UNSPECIFIED', 'HANDMADE', 'MACHINE'],
      default: 'KIND_UNSPECIFIED',
      description:
        'How an item is made.\n\n - KIND_UNSPECIFIED: Not set.\n - HANDMADE: Made by hand.',
    });
    expect((defs(doc)['openapiItem']!['properties'] as Record<string, unknown>)['etag']).toEqual({
      type: 'string',
      readOnly: true,
      description: 'Output only. Set by the server.',
    });
    // Enums reached through well-known types get definitions too (NullValue through Struct/Value).
    expect(defs(doc)['protobufNullValue']).toEqual({
      type: 'string',
      enum: ['NULL_VALUE'],
      default: 'NULL_VALUE',
    });
    // The package comment: a first paragraph ending with a period is the description, not the title.
    expect(doc['info']).toEqual({
      title: 't',
      version: '1',
      description: 'Shapes the OpenAPI generator must write as protoc-gen-openapiv2 does.',
    });
    // Request messages only referenced through query parameters get no definition.
    expect(defs(doc)['openapiListItemsRequest']).toBeUndefined();
  });

  it('honours the openapiv2 file, service, method, message, enum and field options', () => {
    const doc = annotated();
    expect(doc['info']).toMatchObject({
      title: 'Annotated API',
      version: '2.1',
      'x-audience': 'public',
      contact: { email: 'api@example.com' },
    });
    expect(doc['schemes']).toEqual(['https', 'wss']);
    expect(doc['security']).toEqual([{ ApiKey: [] }, { OAuth: ['read', 'write'] }]);
    expect(doc['x-flags']).toEqual([true, 1.5, null]);
    const place = op(doc, '/v1/orders', 'post');
    expect(place.operationId).toBe('placeOrder');
    expect(place['deprecated']).toBe(true);
    expect(place.responses['201']).toEqual({
      description: 'Created.',
      schema: { $ref: '#/definitions/v1Order' },
      examples: { 'application/json': { id: 'o-1' } },
      headers: {
        'X-Request-Id': { description: 'The request id.', type: 'string', format: 'uuid' },
      },
      'x-cache': false,
    });
    // The operation's own 403 wins over the file-level one; the file-level 404 fills in.
    expect(place.responses['403']!.description).toBe('Operation-level 403.');
    expect(op(doc, '/v1/orders/{id}', 'get').responses['403']).toEqual({
      description: 'Not allowed.',
      schema: {},
    });
    // protoc-gen-openapiv2 writes a schema option's JSONSchema type as type and format alike.
    expect(op(doc, '/v1/orders/{id}', 'get').responses['404']).toEqual({
      description: 'Not there.',
      schema: { type: 'string', format: 'string' },
    });
    const order = defs(doc)['v1Order']!;
    expect(order['required']).toEqual(['id', 'quantity', 'customerEmail']);
    expect(order['example']).toEqual({ id: 'o-1', quantity: 2 });
    expect((order['properties'] as Record<string, unknown>)['quantity']).toEqual({
      type: 'integer',
      format: 'int32',
      default: '1',
      minimum: 1,
      maximum: 100,
      multipleOf: 1,
      exclusiveMaximum: true,
    });
    // "Status" exists twice (google.rpc too): the legacy names take one more component.
    expect(defs(doc)['annotatedV1Status']!['title']).toBe('Order status');
    expect(defs(doc)['googleRpcStatus']).toBeDefined();
    expect(doc['tags']).toEqual([
      {
        name: 'Orders',
        description: 'Order operations (file-level tag).',
        externalDocs: { url: 'https://example.com/orders', description: 'Service docs' },
      },
      { name: 'extra', description: 'A tag no service has.', 'x-order': 2 },
    ]);
    const get = op(doc, '/v1/orders/{id}', 'get');
    expect(get.parameters).toEqual([
      { name: 'id', description: 'The order.', in: 'path', required: true, type: 'string' },
      {
        name: 'view',
        in: 'query',
        required: true,
        type: 'string',
        pattern: '^(basic|full)$',
        'x-example': 'full',
      },
      { name: 'fields', in: 'query', required: false, type: 'string' },
    ]);
  });

  it('applies the generator flags', async () => {
    const src = sourceOf(
      ['test/openapi/shapes.proto'],
      ['test.openapi.Catalog', 'test.openapi.Unbound'],
    );
    const flagged = buildOpenApiV2(src, {
      jsonNamesForFields: false,
      disableDefaultErrors: true,
      openapiNamingStrategy: 'fqn',
      enumsAsInts: true,
      omitEnumDefaultValue: true,
      visibilityRestrictionSelectors: ['INTERNAL'],
      enableRpcDeprecation: true,
      simpleOperationIds: true,
    });
    await expectValid(flagged);
    const list = op(flagged, '/v1/items', 'get');
    expect(list.operationId).toBe('ListItems');
    expect(list.responses['default']).toBeUndefined();
    expect(list.responses['200']!.schema).toEqual({
      $ref: '#/definitions/test.openapi.ListItemsResponse',
    });
    const names = list.parameters!.map((p) => p['name']);
    expect(names).toContain('page_size');
    expect(names).toContain('attrs[string]');
    expect(names).toContain('secret');
    expect(list.parameters!.find((p) => p['name'] === 'kind')).toEqual({
      name: 'kind',
      in: 'query',
      required: false,
      type: 'integer',
      enum: [1, 2],
      description: ' - 1: Made by hand.',
    });
    expect(defs(flagged)['test.openapi.Kind']).toEqual({
      type: 'integer',
      format: 'int32',
      enum: [1, 2],
      description: 'How an item is made.\n\n - 1: Made by hand.',
    });
    expect(defs(flagged)['google.rpc.Status']).toBeUndefined();
    expect(Object.keys(flagged['paths'] as object)).toContain('/v1/hidden/{name}');
    expect(op(flagged, '/v1/old/{name}', 'delete')['deprecated']).toBe(true);
    expect(op(flagged, '/v1/items/{item.item_id}', 'patch').parameters![0]!['name']).toBe(
      'item.item_id',
    );
    const simple = buildOpenApiV2(src, { openapiNamingStrategy: 'simple' });
    // simple: the shortest unique suffix, dot-joined; package: nested names stay together.
    expect(Object.keys(defs(simple)).sort()).toEqual([
      'Any',
      'CreateItemBody',
      'Filter',
      'Item',
      'Kind',
      'ListItemsResponse',
      'NullValue',
      'Part',
      'Range',
      'Status',
    ]);
    const pkg = buildOpenApiV2(src, { openapiNamingStrategy: 'package' });
    expect(Object.keys(defs(pkg)).sort()).toEqual([
      'Any',
      'Catalog.CreateItemBody',
      'Filter',
      'Item',
      'Item.Part',
      'Kind',
      'ListItemsResponse',
      'NullValue',
      'Range',
      'Status',
    ]);
  });

  it('stops recursive query parameters as the generator does, and bounds their number', () => {
    const src = sourceOf(['test/openapi/recursive.proto'], ['test.recursive.Trees']);
    const list = { ...src, routes: src.routes.filter((rt) => rt.method.name === 'FindList') };
    // Each level adds one parameter (value) until the message recurs more than recursiveDepth times.
    expect(() => buildOpenApiV2(list, { recursiveDepth: 3 })).toThrow(
      /exceeded the recursion depth \(3\) for query parameter next\.next\.next\.next/,
    );
    // A message recurring through two fields: the first path to go too deep ends it (no blow-up).
    const tree = { ...src, routes: src.routes.filter((rt) => rt.method.name === 'FindTree') };
    expect(() => buildOpenApiV2(tree)).toThrow(
      /exceeded the recursion depth \(1000\) for query parameter (left\.){1000}left/,
    );
  });
});
