import { describe, expect, it } from 'vitest';
import { middlewareSchema } from '../options.js';
import { rpcCall, testCall } from '../../test-support/test-call.js';
import { SecureMiddleware } from './index.js';
import { secureSchema } from './schema.js';

const secure = (options: Record<string, unknown> = {}) =>
  new SecureMiddleware(secureSchema.parse({ enabled: true, ...options }));

describe('SecureMiddleware', () => {
  it("sets today's recommended headers by default; HSTS only over TLS", () => {
    const plain = testCall({});
    secure().before(plain.call);
    expect(Object.fromEntries(plain.out)).toEqual({
      'X-XSS-Protection': '0',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'SAMEORIGIN',
      'Referrer-Policy': 'no-referrer',
    });
    const tls = rpcCall({ method: 'GET', scheme: 'https' });
    secure().before(tls.call);
    expect(tls.out.get('Strict-Transport-Security')).toBe('max-age=31536000; includeSubDomains');
  });

  it('trusts X-Forwarded-Proto only when told to', () => {
    const forwarded = { 'x-forwarded-proto': 'https, http' };
    const untrusted = testCall({}, forwarded);
    secure().before(untrusted.call);
    expect(untrusted.out.has('Strict-Transport-Security')).toBe(false);
    const trusted = testCall({}, forwarded);
    secure({
      trustForwardedProto: true,
      hstsMaxAge: 600,
      hstsExcludeSubdomains: true,
      hstsPreloadEnabled: true,
    }).before(trusted.call);
    expect(trusted.out.get('Strict-Transport-Security')).toBe('max-age=600; preload');
  });

  it('takes every rk-boot key; "" sends no header; CSP report-only', () => {
    const { call, out } = testCall({});
    secure({
      xssProtection: '',
      contentTypeNosniff: '',
      xFrameOptions: 'DENY',
      contentSecurityPolicy: "default-src 'none'",
      cspReportOnly: true,
      referrerPolicy: 'same-origin',
    }).before(call);
    expect(Object.fromEntries(out)).toEqual({
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy-Report-Only': "default-src 'none'",
      'Referrer-Policy': 'same-origin',
    });
  });

  it('leaves native gRPC calls and ignored paths alone; refuses header values with line breaks', () => {
    const grpc = rpcCall();
    secure().before(grpc.call);
    const ignored = testCall({ apiPath: '/livez' });
    secure({ ignore: ['/livez'] }).before(ignored.call);
    expect(grpc.out.size + grpc.metadataOut.size + ignored.out.size).toBe(0);
    const bad = middlewareSchema.safeParse({
      secure: { enabled: true, contentSecurityPolicy: "default-src 'self'\r\nX-Evil: 1" },
    });
    expect(bad.error?.issues[0]?.path.join('.')).toBe('secure.contentSecurityPolicy');
  });
});
