import type { AppInfo, EnvInfo } from '../info.js';
import { isoWithOffset } from '../time.js';
import type { CallContext, CallMiddleware } from './call.js';
import { isIgnored } from './definition.js';

/** The response headers of ARCHITECTURE.md §5.2. */
export const META_HEADERS = {
  requestId: 'X-Request-Id',
  domain: 'X-Svc-App-Domain',
  name: 'X-Svc-App-Name',
  unixTime: 'X-Svc-App-Unix-Time',
  version: 'X-Svc-App-Version',
  receivedTime: 'X-Svc-Received-Time',
} as const;

/** The app headers' names for `middleware.meta.prefix` (`X-<prefix>-App-Name`, …). */
export function metaHeaders(prefix: string): typeof META_HEADERS {
  if (prefix === 'Svc') return META_HEADERS;
  return {
    requestId: META_HEADERS.requestId,
    domain: `X-${prefix}-App-Domain`,
    name: `X-${prefix}-App-Name`,
    unixTime: `X-${prefix}-App-Unix-Time`,
    version: `X-${prefix}-App-Version`,
    receivedTime: `X-${prefix}-Received-Time`,
  } as unknown as typeof META_HEADERS;
}

/** Adds the request id and the app headers to every response (but the `ignore`d calls). */
export class MetaMiddleware implements CallMiddleware {
  private readonly names: typeof META_HEADERS;
  private readonly ignore: readonly string[];

  constructor(
    private readonly app: AppInfo,
    private readonly env: EnvInfo,
    options: { prefix?: string; ignore?: readonly string[] } = {},
  ) {
    this.names = metaHeaders(options.prefix ?? 'Svc');
    this.ignore = options.ignore ?? [];
  }

  before(call: CallContext): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call)) return;
    const h = call.headers;
    const n = this.names;
    const received = isoWithOffset(call.receivedMs);
    h.set(n.requestId, call.requestId);
    h.set(n.domain, this.env.domain);
    h.set(n.name, this.app.name);
    h.set(n.unixTime, isoWithOffset(Date.now()));
    h.set(n.version, this.app.version);
    h.set(n.receivedTime, received);
  }
}
