import type { MethodDefinition } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { HealthService } from './health.js';

type Method = MethodDefinition<unknown, unknown>;
const shapeOf = (definition: object) =>
  Object.fromEntries(
    Object.entries(definition as Record<string, Method>).map(([k, m]) => [
      k,
      [m.path, m.requestStream, m.responseStream, m.originalName],
    ]),
  );
/** Whether the service built its proto-loader definition (a private field). */
const built = (h: HealthService) => (h as unknown as { loaded?: object }).loaded !== undefined;

describe('HealthService.definition', () => {
  it('builds no codec until a call is coded; paths, flags and names as proto-loader gives them', () => {
    const health = new HealthService(
      () => true,
      () => true,
    );
    // What registering the service reads.
    const shape = shapeOf(health.definition);
    expect(built(health)).toBe(false);
    expect(shape).toEqual(shapeOf(health.packageDefinition['grpc.health.v1.Health'] as object));
    expect(built(health)).toBe(true);
  });

  it('codes requests and answers on first use', () => {
    const health = new HealthService(
      () => true,
      () => true,
    );
    const { Check, Watch } = health.definition as Record<string, Method>;
    const request = Check!.requestSerialize({ service: 'api.v1.Greeter' });
    // Field 1, length-delimited, 14 bytes: the name.
    expect([...request.subarray(0, 2)]).toEqual([0x0a, 14]);
    expect(built(health)).toBe(true);
    expect(Watch!.requestDeserialize(request)).toEqual({ service: 'api.v1.Greeter' });
    for (const [status, n] of [
      ['SERVING', 1],
      ['NOT_SERVING', 2],
      ['SERVICE_UNKNOWN', 3],
    ] as const) {
      const bytes = Watch!.responseSerialize({ status });
      expect([...bytes]).toEqual([0x08, n]);
      expect(Check!.responseDeserialize(bytes)).toEqual({ status });
    }
    expect(health.fileDescriptorProtos().length).toBeGreaterThan(0);
  });
});
