import { setHttpHeader, type CallContext, type CallMiddleware } from '../call.js';
import { CallAnswer } from '../answer.js';
import type { MiddlewareDefinition } from '../definition.js';
import { HttpScope, httpMethodOf } from '../http-scope.js';
import { OriginMatcher } from './origins.js';
import { corsSchema, type CorsConfig } from './schema.js';

const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
const PREFLIGHT = { middleware: 'cors', reason: 'preflight' } as const;

/**
 * CORS on gateway and httpserver calls: `Vary: Origin` always; an allowed Origin gets
 * `Access-Control-Allow-Origin` (and credentials, exposed headers); a preflight (OPTIONS with
 * Origin and Access-Control-Request-Method) from an allowed origin is answered 204 here, without
 * the handler (a CallAnswer). A disallowed origin gets no CORS headers and the call goes on as it
 * would without this middleware (the browser then refuses to hand the answer to the page).
 */
export class CorsMiddleware implements CallMiddleware {
  private readonly scope: HttpScope;
  private readonly origins: OriginMatcher;
  private readonly credentials: boolean;
  private readonly methods: string;
  private readonly headers: string | undefined;
  private readonly expose: string | undefined;
  private readonly maxAge: string | undefined;
  private readonly answer: CallAnswer;

  constructor(config: CorsConfig) {
    this.scope = new HttpScope(config.ignore);
    this.origins = new OriginMatcher(config.allowOrigins);
    this.credentials = config.allowCredentials;
    this.methods = config.allowMethods.join(', ');
    this.headers = config.allowHeaders.length > 0 ? config.allowHeaders.join(', ') : undefined;
    this.expose = config.exposeHeaders.length > 0 ? config.exposeHeaders.join(', ') : undefined;
    this.maxAge = config.maxAge > 0 ? String(config.maxAge) : undefined;
    // One answer for every preflight: its headers are set on the call, not carried by it.
    this.answer = new CallAnswer(204, {}, PREFLIGHT);
  }

  before(call: CallContext): void {
    if (!this.scope.applies(call)) return;
    const h = call.headers;
    const origin = h.get('origin');
    const preflight =
      origin !== undefined &&
      httpMethodOf(call) === 'OPTIONS' &&
      h.get('access-control-request-method') !== undefined;
    setHttpHeader(call, 'Vary', preflight ? PREFLIGHT_VARY : 'Origin');
    if (origin === undefined || !this.origins.allows(origin)) return;
    // `*` only without credentials (the schema refuses `*` with them); else the origin itself.
    setHttpHeader(
      call,
      'Access-Control-Allow-Origin',
      this.origins.any && !this.credentials ? '*' : origin,
    );
    if (this.credentials) setHttpHeader(call, 'Access-Control-Allow-Credentials', 'true');
    if (!preflight) {
      if (this.expose !== undefined)
        setHttpHeader(call, 'Access-Control-Expose-Headers', this.expose);
      return;
    }
    setHttpHeader(call, 'Access-Control-Allow-Methods', this.methods);
    const allowHeaders = this.headers ?? h.get('access-control-request-headers');
    if (allowHeaders !== undefined && allowHeaders !== '')
      setHttpHeader(call, 'Access-Control-Allow-Headers', allowHeaders);
    if (this.maxAge !== undefined) setHttpHeader(call, 'Access-Control-Max-Age', this.maxAge);
    throw this.answer;
  }
}

/** `middleware.cors`. */
export const corsDefinition: MiddlewareDefinition<CorsConfig> = {
  key: 'cors',
  phase: 'browser',
  after: 'secure',
  schema: corsSchema,
  create: (config) => new CorsMiddleware(config),
};
