import { describe, expect, it } from 'vitest';
import { grpcClientSchema } from './schema.js';
import { serviceConfigOf } from './service-config.js';
import { parseTarget } from './target.js';

describe('parseTarget', () => {
  it('maps each form onto a grpc-js target', () => {
    expect(parseTarget('dns:///users.default.svc.cluster.local:8080')).toMatchObject({
      grpcTarget: 'dns:///users.default.svc.cluster.local:8080',
    });
    expect(parseTarget('dns://10.0.0.10:53/users:8080')).toMatchObject({
      grpcTarget: 'dns://10.0.0.10:53/users:8080',
    });
    expect(parseTarget('users:8080')).toMatchObject({ grpcTarget: 'dns:///users:8080' });
    expect(parseTarget('dns:users:8080')).toMatchObject({ grpcTarget: 'dns:///users:8080' });
    expect(parseTarget('static:///10.0.0.1:80,10.0.0.2:81')).toMatchObject({
      grpcTarget: 'ipv4:10.0.0.1:80,10.0.0.2:81',
    });
    expect(parseTarget('static:///[::1]:80,[fe80::1]:81')).toMatchObject({
      grpcTarget: 'ipv6:[::1]:80,[fe80::1]:81',
    });
    expect(parseTarget('unix:/run/users.sock')).toMatchObject({
      grpcTarget: 'unix:/run/users.sock',
    });
    expect(parseTarget('unix:///run/users.sock')).toMatchObject({
      grpcTarget: 'unix:/run/users.sock',
    });
  });

  it('says what is wrong with a malformed target', () => {
    expect(parseTarget('')).toMatch(/empty/);
    expect(parseTarget('dns:///users')).toMatch(/not host:port/);
    expect(parseTarget('users:0')).toMatch(/outside 1-65535/);
    expect(parseTarget('static:///users:80')).toMatch(/not an IP address.*dns:\/\/\/users:80/);
    expect(parseTarget('static:///10.0.0.1:80,[::1]:80')).toMatch(/mixes IPv4 and IPv6/);
    expect(parseTarget('http://users:80')).toMatch(/unknown scheme/);
    expect(parseTarget('unix:')).toMatch(/no socket path/);
  });
});

describe('serviceConfigOf', () => {
  const config = (extra: Record<string, unknown>) =>
    grpcClientSchema.parse({ name: 'users', target: 'dns:///users:80', ...extra });

  it('names the balancing policy; no retry policy unless maxAttempts > 1', () => {
    expect(JSON.parse(serviceConfigOf(config({ loadBalancing: 'round_robin' })))).toEqual({
      loadBalancingConfig: [{ round_robin: {} }],
    });
  });

  it('writes a gRFC A6 retry policy and retry throttling', () => {
    const sc = JSON.parse(
      serviceConfigOf(
        config({
          retry: {
            maxAttempts: 3,
            initialBackoffMs: 50,
            maxBackoffMs: 1000,
            retryableCodes: ['UNAVAILABLE'],
          },
        }),
      ),
    );
    expect(sc.methodConfig).toEqual([
      {
        name: [{}],
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.05s',
          maxBackoff: '1s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ]);
    expect(sc.retryThrottling).toEqual({ maxTokens: 10, tokenRatio: 0.1 });
  });
});
