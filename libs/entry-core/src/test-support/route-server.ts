import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpRoute } from '../http/route.js';

/** A plain node:http server that hands every request to `route` (404 when it does not match). */
export async function serveRoute(
  route: HttpRoute,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    if (route.match(pathname) === undefined) {
      res.statusCode = 404;
      res.end('no route');
      return;
    }
    void route.serve(req, res, pathname);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request with the path sent exactly as given (node:http does not normalise it, fetch would),
 * on a connection of its own: a socket kept alive by the global agent could be reused just as the
 * server closes it after its keep-alive timeout (5 s idle, e.g. behind a slow heap snapshot on a
 * loaded machine), and the request would fail with ECONNRESET.
 */
export function rawGet(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
