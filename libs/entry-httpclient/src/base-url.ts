/** A parsed `baseUrl`: the origin and the path prefix every call's path is appended to. */
export interface BaseUrl {
  /** `http://billing:8080` */
  readonly origin: string;
  /** `/api` or '' (no trailing slash). */
  readonly prefix: string;
  readonly host: string;
  readonly port: number;
}

/**
 * `baseUrl` as `http(s)://host[:port][/prefix]`, or a sentence saying what is wrong with it (for
 * the config error at `httpclient[<name>].baseUrl`).
 */
export function parseBaseUrl(text: string): BaseUrl | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL; write http://host:port (or https://host:port/prefix)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `"${text}" is a ${url.protocol.slice(0, -1)}: URL; write http://host:port or https://host:port`;
  if (url.hostname === '') return `"${text}" has no host; write http://host:port`;
  if (url.username !== '' || url.password !== '')
    return `"${text.replace(/\/\/[^@]*@/, '//***@')}" carries credentials; put them in auth (auth.bearerToken or auth.apiKey with \${VAR})`;
  if (url.search !== '' || url.hash !== '')
    return `"${text}" has a query or fragment; give those per call`;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    origin: url.origin,
    prefix: url.pathname.replace(/\/+$/, ''),
    host: url.hostname,
    port,
  };
}
