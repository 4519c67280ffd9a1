import type { CallContext, CallMiddleware } from '../call.js';
import { setHttpHeader } from '../call.js';
import type { MiddlewareDefinition } from '../definition.js';
import { HttpScope, overTls } from '../http-scope.js';
import { secureSchema, type SecureConfig } from './schema.js';

/**
 * Security response headers on gateway and httpserver calls (native gRPC calls have no browser to
 * protect). Runs before the guards (order 360), so their rejections carry the headers too.
 */
export class SecureMiddleware implements CallMiddleware {
  private readonly scope: HttpScope;
  /** The headers every call gets, flat: name, value, … */
  private readonly always: readonly string[];
  /** `Strict-Transport-Security`'s value, or undefined when off. */
  private readonly hsts: string | undefined;
  private readonly trustForwardedProto: boolean;

  constructor(config: SecureConfig) {
    this.scope = new HttpScope(config.ignore);
    const always: string[] = [];
    const add = (name: string, value: string): void => {
      if (value !== '') always.push(name, value);
    };
    add('X-XSS-Protection', config.xssProtection);
    add('X-Content-Type-Options', config.contentTypeNosniff);
    add('X-Frame-Options', config.xFrameOptions);
    add(
      config.cspReportOnly ? 'Content-Security-Policy-Report-Only' : 'Content-Security-Policy',
      config.contentSecurityPolicy,
    );
    add('Referrer-Policy', config.referrerPolicy);
    this.always = always;
    this.hsts =
      config.hstsMaxAge > 0
        ? `max-age=${config.hstsMaxAge}${config.hstsExcludeSubdomains ? '' : '; includeSubDomains'}${config.hstsPreloadEnabled ? '; preload' : ''}`
        : undefined;
    this.trustForwardedProto = config.trustForwardedProto;
  }

  before(call: CallContext): void {
    if (!this.scope.applies(call)) return;
    const always = this.always;
    for (let i = 0; i < always.length; i += 2) setHttpHeader(call, always[i]!, always[i + 1]!);
    if (this.hsts !== undefined && overTls(call, this.trustForwardedProto))
      setHttpHeader(call, 'Strict-Transport-Security', this.hsts);
  }
}

/** `middleware.secure`. */
export const secureDefinition: MiddlewareDefinition<SecureConfig> = {
  key: 'secure',
  phase: 'browser',
  schema: secureSchema,
  create: (config) => new SecureMiddleware(config),
};
