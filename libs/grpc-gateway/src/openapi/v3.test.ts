import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { sourceOf } from '../../../grpc-server/src/test-support/openapi-source.js';
import { buildOpenApiV3, type OpenApiDocument } from '@svcboot/openapi';

const testdata = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testdata');

/** Expected documents, each value checked against protoc-gen-openapiv3's rules for these protos. */
function golden(name: string): OpenApiDocument {
  return JSON.parse(readFileSync(path.join(testdata, name), 'utf8')) as OpenApiDocument;
}

const shapes = () =>
  buildOpenApiV3(
    sourceOf(['test/openapi/shapes.proto'], ['test.openapi.Catalog', 'test.openapi.Unbound']),
  );
const library = () => buildOpenApiV3(sourceOf(['test/v1/library.proto'], ['test.v1.Library']));
const annotated = () =>
  buildOpenApiV3(sourceOf(['test/openapi/annotated.proto'], ['test.annotated.v1.OrderService']));

type Op = Record<string, unknown> & { parameters?: Array<Record<string, unknown>> };
const op = (doc: OpenApiDocument, p: string, m: string): Op =>
  (doc['paths'] as Record<string, Record<string, Op>>)[p]![m]!;
const schemas = (doc: OpenApiDocument): Record<string, Record<string, unknown>> =>
  (doc['components'] as { schemas: Record<string, Record<string, unknown>> }).schemas;

describe('OpenAPI 3.1 as protoc-gen-openapiv3 writes it', () => {
  it('matches the expected documents and every one passes an OpenAPI 3.1 validator', async () => {
    for (const [name, build] of [
      ['shapes', shapes],
      ['library', library],
      ['annotated', annotated],
    ] as const) {
      const doc = build();
      expect(doc, name).toEqual(golden(`${name}.openapi.json`));
      const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
      if (!result.valid)
        throw new Error(`${name}: not a valid OpenAPI document:\n${compileErrors(result)}`);
      expect(result.specification).toBe('OpenAPI');
      expect(doc['openapi']).toBe('3.1.0');
    }
  });

  it('expands path patterns, suffixes operation ids and writes request bodies inline', () => {
    const doc = shapes();
    const get = op(doc, '/v1/shelves/{name}/items/{name_1}', 'get');
    expect(get['operationId']).toBe('Catalog_GetItem');
    expect(get.parameters!.map((p) => p['name'])).toEqual(['name', 'name_1']);
    expect(op(doc, '/v1/items/{item.item_id}', 'patch')['requestBody']).toEqual({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/test.openapi.Item' } },
      },
      required: true,
    });
    const create = op(doc, '/v1/shelves/{shelf_id}/items', 'post');
    expect(create['requestBody']).toEqual({
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              item: { $ref: '#/components/schemas/test.openapi.Item' },
              requestId: { type: 'string' },
            },
            required: ['item'],
          },
        },
      },
      required: true,
    });
    // The response's message comment is the 200 description.
    expect(
      (create['responses'] as Record<string, { description: string }>)['200']!.description,
    ).toBe('A catalog item.');
    const names = op(doc, '/v1/items', 'get').parameters!.map((p) => p['name']);
    expect(names).toContain('attrs[string]');
    expect(names).toContain('ranges[string]');
    expect(names).toContain('meta');
    expect(names).not.toContain('windows');
    expect(names).not.toContain('secret');
  });

  it('writes oneofs as oneOf constraints and well-known types as protoc-gen-openapiv3 does', () => {
    const doc = shapes();
    const item = schemas(doc)['test.openapi.Item']!;
    expect(item['oneOf']).toEqual([
      { type: 'object', not: { anyOf: [{ required: ['url'] }, { required: ['uploadId'] }] } },
      { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
      { type: 'object', properties: { uploadId: { type: 'string' } }, required: ['uploadId'] },
    ]);
    const res = schemas(doc)['test.openapi.ListItemsResponse']!['properties'] as Record<
      string,
      unknown
    >;
    expect(res['list']).toEqual({ type: 'array', items: {} });
    expect(res['nothing']).toEqual({ type: 'object' });
    expect((res['extra'] as Record<string, unknown>)['additionalProperties']).toBe(true);
    expect(schemas(doc)['google.rpc.Status']!['type']).toBe('object');
    expect(schemas(doc)['test.openapi.Kind']).toEqual({
      type: 'string',
      enum: ['KIND_UNSPECIFIED', 'HANDMADE', 'MACHINE'],
      description: 'How an item is made.',
    });
    // field_behavior OUTPUT_ONLY on a field: readOnly.
    expect(
      (schemas(annotated())['test.annotated.v1.Order']!['properties'] as Record<string, unknown>)[
        'createdBy'
      ],
    ).toEqual({ type: 'string', readOnly: true });
  });

  it('truncates recursive query parameters at recursiveDepth and refuses a blow-up', () => {
    const src = sourceOf(['test/openapi/recursive.proto'], ['test.recursive.Trees']);
    const list = { ...src, routes: src.routes.filter((rt) => rt.method.name === 'FindList') };
    const names = op(
      buildOpenApiV3(list, { recursiveDepth: 3 }),
      '/v1/lists',
      'get',
    ).parameters!.map((p) => p['name']);
    expect(names).toEqual(['value', 'next.value', 'next.next.value', 'next.next.next.value']);
    expect(() => buildOpenApiV3(src)).toThrow(/more than 10000 query parameters/);
  });
});
