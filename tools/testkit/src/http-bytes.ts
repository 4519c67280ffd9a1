import http from 'node:http';

/** A response with its body's bytes as sent (no decoding of Content-Encoding, unlike fetch). */
export interface BytesResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** GET `path` on 127.0.0.1:`port` with `headers`, the body left as it came (e.g. compressed). */
export function getBytes(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<BytesResponse> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
