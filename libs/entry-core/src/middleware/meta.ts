import type { AppInfo, EnvInfo } from '../info.js';
import { isoWithOffset } from '../time.js';
import type { CallContext, CallMiddleware } from './call.js';

/** The response headers of ARCHITECTURE.md §5.2. */
export const META_HEADERS = {
  requestId: 'X-Request-Id',
  domain: 'X-Svc-App-Domain',
  name: 'X-Svc-App-Name',
  unixTime: 'X-Svc-App-Unix-Time',
  version: 'X-Svc-App-Version',
  receivedTime: 'X-Svc-Received-Time',
} as const;

/** Adds the request id and the app headers to every response. */
export class MetaMiddleware implements CallMiddleware {
  constructor(
    private readonly app: AppInfo,
    private readonly env: EnvInfo,
  ) {}

  before(call: CallContext): void {
    const h = call.headers;
    const received = isoWithOffset(call.receivedMs);
    h.set(META_HEADERS.requestId, call.requestId);
    h.set(META_HEADERS.domain, this.env.domain);
    h.set(META_HEADERS.name, this.app.name);
    h.set(META_HEADERS.unixTime, isoWithOffset(Date.now()));
    h.set(META_HEADERS.version, this.app.version);
    h.set(META_HEADERS.receivedTime, received);
  }
}
