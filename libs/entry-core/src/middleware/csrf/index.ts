import { randomBytes } from 'node:crypto';
import { CSRF_TOKEN } from './context.js';
import { setHttpHeader, type CallContext, type CallMiddleware } from '../call.js';
import type { MiddlewareDefinition } from '../definition.js';
import { HttpScope, httpMethodOf, overTls } from '../http-scope.js';
import { CallRejection } from '../rejection.js';
import { csrfSchema, type CsrfConfig } from './schema.js';
import { cookieValue, CsrfTokens, sameText } from './token.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
const FORM_TYPE = 'application/x-www-form-urlencoded';

interface Lookup {
  readonly from: 'header' | 'form' | 'query';
  readonly name: string;
}

// What a handler reads (entry-core's '.' exports them): in a module of their own, so that an app
// whose boot.yaml leaves csrf off does not load the middleware's code.
export { csrfTokenOf, CSRF_TOKEN } from './context.js';

/**
 * Signed double-submit CSRF protection on gateway and httpserver calls (native gRPC calls, which
 * browsers cannot make, and gRPC-Web calls, which no page of another site can send without a CORS
 * preflight, are exempt). Safe methods (GET, HEAD, OPTIONS, TRACE) pass and get the
 * token cookie; any other method must send the cookie's token back where `tokenLookup` says: 400
 * when it sends none, 403 when it does not match the cookie or is not signed with this key.
 */
export class CsrfMiddleware implements CallMiddleware {
  private readonly scope: HttpScope;
  private readonly tokens: CsrfTokens;
  private readonly lookups: readonly Lookup[];
  private readonly cookieName: string;
  /** `Set-Cookie` before the value, and the attributes after it (without `Secure`). */
  private readonly cookiePrefix: string;
  private readonly cookieSuffix: string;
  private readonly alwaysSecure: boolean;
  private readonly trustForwardedProto: boolean;
  private readonly where: string;

  constructor(config: CsrfConfig, key: Buffer | string) {
    this.scope = new HttpScope(config.ignore);
    this.tokens = new CsrfTokens(key, config.tokenLength);
    this.lookups = config.tokenLookup.split(',').map((part) => {
      const p = part.trim();
      const colon = p.indexOf(':');
      return { from: p.slice(0, colon) as Lookup['from'], name: p.slice(colon + 1) };
    });
    this.where = this.lookups
      .map((l) =>
        l.from === 'header'
          ? `the ${l.name} header`
          : l.from === 'form'
            ? `form field ${l.name}`
            : `query parameter ${l.name}`,
      )
      .join(' or ');
    this.cookieName = config.cookieName;
    this.cookiePrefix = `${config.cookieName}=`;
    let suffix = '';
    if (config.cookiePath !== '') suffix += `; Path=${config.cookiePath}`;
    if (config.cookieDomain !== '') suffix += `; Domain=${config.cookieDomain}`;
    if (config.cookieMaxAge > 0) suffix += `; Max-Age=${config.cookieMaxAge}`;
    if (config.cookieSameSite !== 'default')
      suffix += `; SameSite=${config.cookieSameSite[0]!.toUpperCase()}${config.cookieSameSite.slice(1)}`;
    if (config.cookieHttpOnly) suffix += '; HttpOnly';
    this.cookieSuffix = suffix;
    this.alwaysSecure = config.cookieSameSite === 'none';
    this.trustForwardedProto = config.trustForwardedProto;
  }

  before(call: CallContext): void | Promise<void> {
    // gRPC-Web: its content type needs a CORS preflight, so no other site can send one unasked.
    if (!this.scope.applies(call) || call.info.apiProtocol === 'gRPC-Web') return;
    const cookie = cookieValue(call.headers.get('cookie'), this.cookieName);
    const valid = cookie !== undefined && cookie !== '' && this.tokens.valid(cookie);
    if (SAFE.has(httpMethodOf(call))) {
      this.pass(call, valid ? cookie : this.tokens.create());
      return;
    }
    const sent = this.sentSync(call);
    if (sent !== undefined || !this.lookups.some((l) => l.from === 'form'))
      return this.check(call, sent, valid ? cookie : undefined);
    const form = this.fromForm(call);
    if (form === undefined) return this.check(call, undefined, valid ? cookie : undefined);
    return form.then((v) => this.check(call, v, valid ? cookie : undefined));
  }

  /** The token from a header or the query, the first lookup that finds one. */
  private sentSync(call: CallContext): string | undefined {
    for (const l of this.lookups) {
      let v: string | null | undefined;
      if (l.from === 'header') v = call.headers.get(l.name);
      else if (l.from === 'query' && call.info.apiQuery !== '')
        v = new URLSearchParams(call.info.apiQuery).get(l.name);
      if (v) return v;
    }
    return undefined;
  }

  /** The token from a form body's field (the body is read once; the handler still gets it). */
  private fromForm(call: CallContext): Promise<string | undefined> | undefined {
    const type = call.headers.get('content-type');
    if (type === undefined || !isForm(type)) return undefined;
    const body = call.body();
    if (body === undefined) return undefined;
    return body.then((bytes) => {
      const params = new URLSearchParams(bytes.toString('utf8'));
      for (const l of this.lookups) {
        if (l.from !== 'form') continue;
        const v = params.get(l.name);
        if (v) return v;
      }
      return undefined;
    });
  }

  private check(call: CallContext, sent: string | undefined, cookie: string | undefined): void {
    if (sent === undefined)
      throw new CallRejection(
        'InvalidArgument',
        `missing CSRF token: send the ${this.cookieName} cookie's value in ${this.where}`,
        {},
        { middleware: 'csrf', reason: 'missing_token' },
      );
    if (cookie === undefined || !sameText(sent, cookie))
      throw new CallRejection(
        'PermissionDenied',
        'invalid CSRF token',
        {},
        { middleware: 'csrf', reason: 'invalid_token' },
      );
    this.pass(call, cookie);
  }

  private pass(call: CallContext, token: string): void {
    call.set(CSRF_TOKEN, token);
    const secure = this.alwaysSecure || overTls(call, this.trustForwardedProto);
    setHttpHeader(
      call,
      'Set-Cookie',
      `${this.cookiePrefix}${token}${this.cookieSuffix}${secure ? '; Secure' : ''}`,
    );
  }
}

function isForm(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === FORM_TYPE;
}

/** `middleware.csrf`. */
export const csrfDefinition: MiddlewareDefinition<CsrfConfig> = {
  key: 'csrf',
  phase: 'authz',
  schema: csrfSchema,
  create: (config, ctx, entry) => {
    if (config.key === undefined)
      ctx.logger.warn(
        `${entry.configPath}: no key configured, CSRF tokens are signed with a random key of this process; ` +
          'tokens fail on other instances and after a restart. Set key: ${CSRF_KEY} (32+ characters, the same on every instance).',
      );
    return new CsrfMiddleware(config, config.key ?? randomBytes(32));
  },
};
