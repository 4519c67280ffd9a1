import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { boot } from '@svcboot/entry-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcEntry } from '@svcboot/grpc-server';
import { request, startConformance, testdata, type Conformance } from './test-support/harness.js';

// Issue 15 points 7 (path parameters) and 2 (rules).

let c: Conformance;
beforeAll(async () => {
  c = await startConformance();
});
afterAll(async () => {
  await c.stop();
});

const get = (target: string) => request(c, 'GET', target);

describe('path parameters (generated handlers + runtime/convert.go)', () => {
  it('runtime/convert.go Int64/Uint32/Bool/Float64/Enum/Bytes: top-level path variables (integers with Go base prefixes)', async () => {
    const r = await get('/v1/scalars/0x10/0o17/T/1.5e1/2/aGk=');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      int64Value: '16',
      uint32Value: 15,
      boolValue: true,
      doubleValue: 15,
      color: 'GREEN',
      bytesValue: 'aGk=',
    });
    const underscores = await get('/v1/scalars/1_000/0b101/false/-0.5/RED/aGk=');
    expect(underscores.json).toEqual({
      int64Value: '1000',
      uint32Value: 5,
      doubleValue: -0.5,
      color: 'RED',
      bytesValue: 'aGk=',
    });
  });

  it('runtime/convert.go *Slice: repeated fields bound in a path are split on commas', async () => {
    const r = await get('/v1/repeated/1.5,-1.5/RED,2/a,b');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ doubles: [1.5, -1.5], colors: ['RED', 'GREEN'], strings: ['a', 'b'] });
  });

  it('generated handler: a badly typed path variable → 400 "type mismatch, parameter: <name>"', async () => {
    const r = await get('/v1/scalars/abc/1/true/1/RED/aGk=');
    expect(r.status).toBe(400);
    expect((r.json as { message: string }).message).toMatch(
      /^type mismatch, parameter: int64_value, error: /,
    );
    expect((await get('/v1/scalars/1/1/true/1/9/aGk=')).status).toBe(400);
    expect((await get('/v1/repeated/1.5,x/RED/a')).status).toBe(400);
  });

  it('runtime/convert.go Timestamp/Duration/Int64Value: well-known types in a path', async () => {
    const r = await get('/v1/wkt/2024-01-02T03:04:05Z/1.5s/42');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      timestamp: '2024-01-02T03:04:05Z',
      duration: '1.500s',
      wrappedInt64: '42',
    });
    expect((await get('/v1/wkt/2024-01-02T03:04:05Z/1h/42')).status).toBe(400);
  });

  it('runtime/query.go PopulateFieldFromPath: a nested path variable is set with the query rules', async () => {
    const r = await get('/v1/echo/nested/a%20b');
    expect(r.json).toEqual({ nested: { name: 'a b' } });
  });
});

describe('rules (internal/httprule, generator)', () => {
  it('internal/httprule tokenize: a verb with colons after a variable (/{id}:custom:custom)', async () => {
    const r = await request(c, 'POST', '/v1/abc:custom:custom', '{"int32Value": 1}');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ id: 'abc', int32Value: 1 });
    expect((await request(c, 'POST', '/v1/abc:custom', '{}')).status).toBe(404);
  });

  it('generator (body "a.b"): a nested body field path', async () => {
    const r = await request(c, 'POST', '/v1/echo/nested/n1/child', '{"name": "c", "amount": 2}');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ nested: { name: 'n1', child: { name: 'c', amount: 2 } } });
  });

  it('generate_unbound_methods: a method whose request is a well-known type (google.protobuf.Duration)', async () => {
    const r = await request(c, 'POST', '/conformance.v1.Conformance/Double', '"1.5s"');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('3s');
  });

  it('generator: a rule that cannot be served fails bootstrap with an error naming the RPC, the rule and why', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-bad-rule-'));
    const bad = path.join(testdata, 'conformance/v1/bad.proto');
    const yaml = `app:\n  name: bad\nlogger:\n  - name: quiet\n    level: error\ngrpc:\n  - name: gw\n    port: 0\n    loggerEntry: quiet\n    protos:\n      files: ["${bad}"]\n      includeDirs: ["${testdata}"]\n`;
    const app = await boot({ configText: yaml, cwd: dir, argv: [], env: { ...process.env } });
    try {
      const pkg = loadSync(bad, { includeDirs: [testdata], keepCase: true });
      grpcEntry(app, 'gw').addService(pkg['conformance.v1.Bad'] as ServiceDefinition, {
        Get: (_: unknown, cb: (e: null, v: object) => void) => cb(null, {}),
      });
      const started = app.bootstrap();
      await expect(started).rejects.toThrow(/conformance\.v1\.Bad\/Get/);
      await expect(started).rejects.toThrow(/GET \/v1\/bad\/\{nested\}/);
      await expect(started).rejects.toThrow(/conformance\.v1\.Nested message field/);
    } finally {
      await app.shutdown('test').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
