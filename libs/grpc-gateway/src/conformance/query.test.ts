import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startConformance, type Conformance } from './test-support/harness.js';

// Issue 15 point 6: query parameters as runtime/query.go DefaultQueryParser fills a request.

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const get = (target: string) => request(c, 'GET', target);

describe('query parameters (runtime/query.go)', () => {
  it('runtime/query.go parseField: every scalar kind with strconv syntax (ParseBool "t", ParseFloat "inf", base64)', async () => {
    const q = [
      'int32_value=-5',
      'int64_value=123',
      'uint64_value=18446744073709551615',
      'uint32_value=4294967295',
      'fixed64_value=7',
      'fixed32_value=8',
      'sfixed32_value=-9',
      'sfixed64_value=-10',
      'sint32_value=-11',
      'sint64_value=-12',
      'bool_value=t',
      'double_value=1e3',
      'float_value=inf',
      'bytes_value=aGk%3D',
      'color=GREEN',
      'id=x+y',
    ].join('&');
    const r = await get(`/v1/echo?${q}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      id: 'x y',
      int32Value: -5,
      int64Value: '123',
      uint64Value: '18446744073709551615',
      uint32Value: 4294967295,
      fixed64Value: '7',
      fixed32Value: 8,
      sfixed32Value: -9,
      sfixed64Value: '-10',
      sint32Value: -11,
      sint64Value: '-12',
      boolValue: true,
      doubleValue: 1000,
      floatValue: 'Infinity',
      bytesValue: 'aGk=',
      color: 'GREEN',
    });
  });

  it('runtime/query.go parseField: out-of-range and malformed numbers are 400 InvalidArgument', async () => {
    for (const q of [
      'int32_value=2147483648',
      'uint64_value=-1',
      'int64_value=0x10',
      'bool_value=yes',
      'double_value=1,5',
      'bytes_value=%%',
    ]) {
      const r = await get(`/v1/echo?${q}`);
      expect(r.status, q).toBe(400);
      expect((r.json as { code: number }).code, q).toBe(3);
    }
  });

  it('runtime/query.go parseField (EnumKind): by name or by a defined number; anything else 400', async () => {
    expect((await get('/v1/echo?color=RED')).json).toEqual({ color: 'RED' });
    expect((await get('/v1/echo?color=2')).json).toEqual({ color: 'GREEN' });
    const bad = await get('/v1/echo?color=7');
    expect(bad.status).toBe(400);
    expect((bad.json as { message: string }).message).toContain('"7" is not a valid value');
    expect((await get('/v1/echo?color=BLUE')).status).toBe(400);
  });

  it('runtime/query.go populateRepeatedField: repeated keys append, in order', async () => {
    const r = await get('/v1/echo?strings=a&int64s=1&strings=b&int64s=2&colors=RED&colors=2');
    expect(r.json).toEqual({ strings: ['a', 'b'], int64s: ['1', '2'], colors: ['RED', 'GREEN'] });
  });

  it('runtime/query.go populateFieldValueFromPath: repeated values for a singular field → 400 "too many values"', async () => {
    const r = await get('/v1/echo?int32_value=1&int32_value=2');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      code: 3,
      message: 'too many values for field "int32_value": 1, 2',
    });
  });

  it('runtime/query.go populateFieldValueFromPath: two members of one oneof → 400 "field already set for oneof"', async () => {
    const r = await get('/v1/echo?oneof_string=a&oneof_int=1');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 3, message: 'field already set for oneof "choice"' });
    // Fields inside the same message member of the oneof are fine.
    const ok = await get('/v1/echo?oneof_nested.name=n&oneof_nested.amount=2');
    expect(ok.json).toEqual({ oneofNested: { name: 'n', amount: 2 } });
  });

  it('runtime/query.go Parse + populateMapField: map fields as field[key]=value (keys and values typed)', async () => {
    const r = await get(
      '/v1/echo?labels[k1]=v1&labels%5Bk2%5D=v2&colors_by_id[3]=RED&colors_by_id[4]=2',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      labels: { k1: 'v1', k2: 'v2' },
      colorsById: { '3': 'RED', '4': 'GREEN' },
    });
    expect((await get('/v1/echo?colors_by_id[x]=RED')).status).toBe(400);
    expect((await get('/v1/echo?labels[k]=a&labels[k]=b')).status).toBe(400);
  });

  it('runtime/query.go parseMessage: well-known types from their string forms', async () => {
    const q = [
      'timestamp=2024-01-02T03:04:05.5%2B01:00',
      'duration=1h30m',
      'mask=a.b,c_d',
      'wrapped_double=1.5',
      'wrapped_float=2.5',
      'wrapped_int64=9',
      'wrapped_uint64=10',
      'wrapped_int32=-3',
      'wrapped_uint32=4',
      'wrapped_bool=false',
      'wrapped_string=s',
      'wrapped_bytes=aGk%3D',
      `struct_value=${encodeURIComponent('{"a":{"b":1}}')}`,
      `value=${encodeURIComponent('[1,"x",null]')}`,
    ].join('&');
    const r = await get(`/v1/echo?${q}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      timestamp: '2024-01-02T02:04:05.500Z',
      duration: '5400s',
      mask: 'a.b,cD',
      wrappedDouble: 1.5,
      wrappedFloat: 2.5,
      wrappedInt64: '9',
      wrappedUint64: '10',
      wrappedInt32: -3,
      wrappedUint32: 4,
      wrappedBool: false,
      wrappedString: 's',
      wrappedBytes: 'aGk=',
      structValue: { a: { b: 1 } },
      value: [1, 'x', null],
    });
  });

  it('runtime/query.go parseMessage: other messages (ListValue, a plain message) are 400 "unsupported message type"', async () => {
    const list = await get(`/v1/echo?list_value=${encodeURIComponent('[1]')}`);
    expect(list.status).toBe(400);
    expect((list.json as { message: string }).message).toContain(
      'unsupported message type: "google.protobuf.ListValue"',
    );
    expect((await get('/v1/echo?nested=x')).status).toBe(400);
    expect((await get('/v1/echo?duration=5')).status).toBe(400);
    expect((await get('/v1/echo?timestamp=2024-13-01T00:00:00Z')).status).toBe(400);
  });

  it('runtime/query.go Parse: a sibling of a path-bound nested field is kept; only the bound path is filtered', async () => {
    const r = await get('/v1/echo/nested/n1?nested.amount=3&nested.name=zz&nested.child.name=c');
    expect(r.json).toEqual({ nested: { name: 'n1', amount: 3, child: { name: 'c' } } });
    const top = await get('/v1/echo/x?id=y&int32_value=1');
    expect(top.json).toEqual({ id: 'x', int32Value: 1 });
  });

  it('runtime/query.go populateFieldValueFromPath: unknown parameters are ignored; JSON names work too', async () => {
    const r = await get('/v1/echo?nope=1&int32Value=4&nested.nope=2&nested.amount=1');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ int32Value: 4, nested: { amount: 1 } });
  });

  it('net/url ParseQuery (Request.ParseForm): a ";" separator or a bad escape → 400', async () => {
    expect((await get('/v1/echo?int32_value=1;id=2')).status).toBe(400);
    expect((await get('/v1/echo?id=%zz')).status).toBe(400);
  });

  it('runtime/query.go: many distinct keys are all applied (parsed once, linearly)', async () => {
    const keys = Array.from({ length: 800 }, (_, i) => `labels[${i}]=${i}`).join('&');
    const r = await get(`/v1/echo?${keys}`);
    expect(r.status).toBe(200);
    expect(Object.keys((r.json as { labels: object }).labels)).toHaveLength(800);
  });
});
