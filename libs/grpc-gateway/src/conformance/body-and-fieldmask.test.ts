import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 points 5 (field masks) and 8 (bodies).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('field masks (runtime/fieldmask.go)', () => {
  it('runtime/fieldmask.go FieldMaskFromRequestBody: a PATCH fills update_mask from the body keys (nested paths, lists and maps end a path, Struct walked by key), sorted', async () => {
    const body = {
      int32Value: 3,
      nested: { name: 'n', child: {} },
      strings: ['a'],
      labels: { k: 'v' },
      structValue: { a: { b: 1 }, c: 2 },
    };
    const r = await request(c, 'PATCH', '/v1/items/i1', JSON.stringify(body));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      item: {
        id: 'i1',
        int32Value: 3,
        nested: { name: 'n', child: {} },
        strings: ['a'],
        labels: { k: 'v' },
        structValue: { a: { b: 1 }, c: 2 },
      },
      updateMask:
        'int32Value,labels,nested.child,nested.name,strings,structValue.a.b,structValue.c',
    });
  });

  it('generated PATCH handler: update_mask given in the query wins over the body keys', async () => {
    const r = await request(
      c,
      'PATCH',
      '/v1/items/i1?update_mask=int32_value',
      JSON.stringify({ int32Value: 3, strings: ['a'] }),
    );
    expect(r.json).toMatchObject({ updateMask: 'int32Value' });
  });

  it('runtime/fieldmask.go FieldMaskFromRequestBody: proto names in the body give the same paths', async () => {
    const r = await request(
      c,
      'PATCH',
      '/v1/items/i1',
      JSON.stringify({ double_value: 1, wrapped_int32: 2 }),
    );
    expect(r.json).toMatchObject({ updateMask: 'doubleValue,wrappedInt32' });
  });

  it('gwOption.allowPatchFeature false: no mask is filled (protoc-gen-grpc-gateway allow_patch_feature=false)', async () => {
    const d = await startConformance('    gwOption:\n      allowPatchFeature: false\n');
    try {
      const r = await request(d, 'PATCH', '/v1/items/i1', JSON.stringify({ int32Value: 3 }));
      expect(r.json).toEqual({ item: { id: 'i1', int32Value: 3 } });
    } finally {
      await d.stop();
    }
  });
});

describe('bodies (marshal_jsonpb.go, mux.go)', () => {
  it('protoc json_name: en_GB → enGB, in responses and accepted in requests under either name', async () => {
    const a = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ enGB: 'a' }));
    expect(a.json).toEqual({ id: 'x', enGB: 'a' });
    const b = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ en_GB: 'b' }));
    expect(b.json).toEqual({ id: 'x', enGB: 'b' });
  });

  it("runtime/marshal_jsonpb.go DecoderWrapper with protojson's zero UnmarshalOptions (rk-boot's gwOption default, svcboot's): unknown body fields → 400; with gwOption.unmarshal.discardUnknown (v2's default marshaler) ignored", async () => {
    const r = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ nope: 1 }));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 3 });
    const d = await startConformance('    gwOption:\n      unmarshal: { discardUnknown: true }\n');
    try {
      const ok = await request(
        d,
        'POST',
        '/v1/echo/x/body',
        JSON.stringify({ nope: 1, int32Value: 2 }),
      );
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ id: 'x', int32Value: 2 });
    } finally {
      await d.stop();
    }
  });

  it('generated handler: path variables override the body; a body field rule filters the query under it', async () => {
    const r = await request(
      c,
      'POST',
      '/v1/echo/x/body',
      JSON.stringify({ id: 'from-body', int32Value: 1 }),
    );
    expect(r.json).toEqual({ id: 'x', int32Value: 1 });
    const n = await request(
      c,
      'POST',
      '/v1/echo/x/nested?nested.amount=5&int32_value=3',
      JSON.stringify({ name: 'n' }),
    );
    expect(n.json).toEqual({ id: 'x', nested: { name: 'n' }, int32Value: 3 });
  });

  it('generated handler (Request.ParseForm): a form body on a rule without body gives parameters, before the query values', async () => {
    const r = await request(
      c,
      'PUT',
      '/v1/echo/x?strings=q',
      'int32_value=7&strings=f&color=RED',
      FORM,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ id: 'x', int32Value: 7, strings: ['f', 'q'], color: 'RED' });
  });

  it('runtime/mux.go isPathLengthFallback: a form POST to a path with only a GET binding is served by the GET', async () => {
    const r = await request(c, 'POST', '/v1/echo?id=q', 'int32_value=8', FORM);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ id: 'q', int32Value: 8 });
    // Not a form: no fallback (the path has no POST binding).
    expect(
      (await request(c, 'POST', '/v1/echo', '{}', { 'content-type': 'application/json' })).status,
    ).toBe(501);
  });

  it('runtime/mux.go ServeHTTP: X-HTTP-Method-Override on a form POST picks the method', async () => {
    const r = await request(c, 'POST', '/v1/echo/x', 'int32_value=9', {
      ...FORM,
      'x-http-method-override': 'put',
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ id: 'x', int32Value: 9 });
  });

  it('examples/internal/integration TestPostWithEmptyBody: an empty body is an empty message', async () => {
    const r = await request(c, 'POST', '/v1/echo/x/body', '');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: 'x' });
  });
});

describe("grpc-gateway v2's default marshaler (runtime/marshaler_registry.go defaultMarshaler: EmitUnpopulated, DiscardUnknown)", () => {
  // svcboot's defaults are rk-boot's (protojson's zero options: README, Differences); these two
  // gwOption settings give the marshaler a bare runtime.NewServeMux() uses.
  let v2: Conformance;
  beforeAll(async () => {
    v2 = await startConformance(
      '    gwOption:\n      marshal: { emitUnpopulated: true }\n      unmarshal: { discardUnknown: true }\n',
    );
  });
  afterAll(async () => {
    await v2.stop();
  });

  it('protojson EmitUnpopulated: every field but unset oneof members (proto3 optional included) — scalars as zero values, messages null, lists [], maps {}', async () => {
    const r = await request(v2, 'GET', '/v1/echo/x');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: 'x',
      doubleValue: 0,
      floatValue: 0,
      int64Value: '0',
      uint64Value: '0',
      int32Value: 0,
      fixed64Value: '0',
      fixed32Value: 0,
      boolValue: false,
      bytesValue: '',
      uint32Value: 0,
      sfixed32Value: 0,
      sfixed64Value: '0',
      sint32Value: 0,
      sint64Value: '0',
      color: 'COLOR_UNSPECIFIED',
      nested: null,
      strings: [],
      doubles: [],
      colors: [],
      int64s: [],
      labels: {},
      colorsById: {},
      timestamp: null,
      duration: null,
      mask: null,
      wrappedDouble: null,
      wrappedFloat: null,
      wrappedInt64: null,
      wrappedUint64: null,
      wrappedInt32: null,
      wrappedUint32: null,
      wrappedBool: null,
      wrappedString: null,
      wrappedBytes: null,
      structValue: null,
      value: null,
      listValue: null,
      enGB: '',
      nesteds: [],
      anyValue: null,
      blobs: [],
    });
  });

  it('protojson DiscardUnknown: unknown body fields are ignored, the call runs', async () => {
    const r = await request(
      v2,
      'POST',
      '/v1/echo/x/body',
      JSON.stringify({ nope: 1, nested: { alsoNope: true, name: 'n' } }),
    );
    expect(r.status, r.text).toBe(200);
    expect((r.json as Record<string, unknown>)['nested']).toEqual({
      name: 'n',
      amount: 0,
      child: null,
      color: 'COLOR_UNSPECIFIED',
    });
  });
});

describe('documented differences (README, Differences from grpc-gateway)', () => {
  it("a unary body with bytes after its JSON value ({}.) is 400; grpc-gateway's json.Decoder reads the first value and ignores the rest", async () => {
    const r = await request(c, 'POST', '/v1/echo/x/body', '{}.');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 3 });
    const two = await request(c, 'POST', '/v1/echo/x/body', '{"int32Value":1}{"int32Value":2}');
    expect(two.status).toBe(400);
  });
});

describe('svc style (enableSvcGwOption)', () => {
  it('emits unpopulated fields, but an unset google.protobuf.Value is left out rather than written as null (which reads back as null_value)', async () => {
    const d = await startConformance('    enableSvcGwOption: true\n');
    try {
      const r = await request(d, 'GET', '/v1/echo/x');
      const json = r.json as Record<string, unknown>;
      expect(json['id']).toBe('x');
      expect(json['int32Value']).toBe(0);
      expect(json['nested']).toBeNull();
      expect('value' in json).toBe(false);
      const set = await request(d, 'GET', '/v1/echo/x?value=null');
      expect((set.json as Record<string, unknown>)['value']).toBeNull();
    } finally {
      await d.stop();
    }
  });
});

describe('google.api.HttpBody (runtime/marshal_httpbodyproto.go)', () => {
  it('runtime/marshal_httpbodyproto.go HTTPBodyMarshaler: a unary HttpBody response is its data with its content_type', async () => {
    const r = await request(c, 'GET', '/v1/page');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html');
    expect(r.text).toBe('<p>hi</p>');
  });

  it('examples/internal/integration testABEDownload / TestResponseBodyStreamHttpBody: a streamed HttpBody is each data then "\\n"', async () => {
    const r = await request(c, 'GET', '/v1/download');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html');
    expect(r.text).toBe('Hello 1\nHello 2\n');
  });

  it('examples/internal/integration TestResponseBodyStreamHttpBodyError: a failure after HttpBody chunks is an {"error"} line', async () => {
    const r = await request(c, 'GET', '/v1/download?count=-1');
    expect(r.status).toBe(200);
    const lines = r.text.split('\n').filter((l) => l !== '');
    expect(lines.slice(0, 2)).toEqual(['Hello 1', 'Hello 2']);
    expect(JSON.parse(lines[2]!)).toEqual({ error: { code: 3, message: 'error', details: [] } });
  });

  it('an HttpBody request takes the raw body and its Content-Type (as Envoy and ESP transcode it; grpc-gateway decodes JSON)', async () => {
    const r = await request(c, 'POST', '/v1/upload', 'a,b\n1,2', { 'content-type': 'text/csv' });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      contentType: 'text/csv',
      data: Buffer.from('a,b\n1,2').toString('base64'),
    });
  });
});

describe('google.protobuf.Any (protojson)', () => {
  it('protojson: an Any in a request body takes the packed message in its JSON form (JSON names, well-known types under "value")', async () => {
    const url = 'type.googleapis.com/conformance.v1.Everything';
    const sent = {
      '@type': url,
      int64Value: '7',
      timestamp: '2024-01-02T03:04:05Z',
      nested: { name: 'n' },
    };
    const r = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ anyValue: sent }));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ id: 'x', anyValue: sent });
    const wkt = { '@type': 'type.googleapis.com/google.protobuf.Duration', value: '1.500s' };
    const d = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ anyValue: wkt }));
    expect(d.json).toEqual({ id: 'x', anyValue: wkt });
    const unknown = await request(
      c,
      'POST',
      '/v1/echo/x/body',
      JSON.stringify({ anyValue: { '@type': 'type.googleapis.com/no.Such' } }),
    );
    expect(unknown.status).toBe(400);
  });

  it('protojson: an Any is written as {"@type": url, …fields}, its type found in the loaded protos, int64 and enums in canonical form', async () => {
    const url = 'type.googleapis.com/conformance.v1.Everything';
    const sent = { '@type': url, int64_value: '5', bytes_value: 'aGk=', color: 'GREEN' };
    const r = await request(c, 'POST', '/v1/echo/x/body', JSON.stringify({ anyValue: sent }));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      id: 'x',
      anyValue: { '@type': url, int64Value: '5', bytesValue: 'aGk=', color: 'GREEN' },
    });
  });
});
