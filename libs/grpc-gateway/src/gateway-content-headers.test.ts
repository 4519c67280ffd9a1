import net from 'node:net';
import { CallRejection } from '@svcboot/entry-core';
import { HTTP_REQUEST, RPC_METHOD, setHttpHeader } from '@svcboot/entry-core/call';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, type Harness } from '../../grpc-server/src/test-support/harness.js';

// The gateway appends its Content-Type and Content-Length without searching the header list when
// nothing can have put either there (GatewayHeaders.contentNames): a middleware's or a
// rejection's Content-Type / Content-Length, in any case, is still replaced, never repeated.

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** One request on its own connection; the header lines as sent (names lowercased) and the body. */
function raw(
  port: number,
  path: string,
): Promise<{ status: number; lines: string[][]; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        lines: lines.map((l) => {
          const colon = l.indexOf(':');
          return [l.slice(0, colon).toLowerCase(), l.slice(colon + 1).trim()];
        }),
        body: text.slice(end + 4),
      });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`);
  });
}

const values = (lines: string[][], name: string) =>
  lines.filter(([n]) => n === name).map(([, v]) => v);

describe.each([
  { style: "grpc-gateway's", yaml: '' },
  { style: 'the svc', yaml: '    enableSvcGwOption: true\n' },
])("a gateway call's Content-Type and Content-Length, in $style style", ({ yaml }) => {
  it("come once, the gateway's, when a middleware or a rejection set them too", async () => {
    h = await startLibrary(yaml, {
      setup: (entry) =>
        entry.useMiddleware('authn', {
          before(call) {
            if (call.get(RPC_METHOD)?.method !== 'GetShelf') return;
            const path = call.get(HTTP_REQUEST)?.path;
            if (path === '/v1/shelves/s3')
              throw new CallRejection('PermissionDenied', 'not you', {
                'CONTENT-TYPE': 'text/html',
                'content-length': '7',
              });
            // In grpc-gateway's style this one is Grpc-Metadata-content-type.
            if (path === '/v1/shelves/s1') call.headers.set('content-type', 'text/plain');
            if (path === '/v1/shelves/s2') setHttpHeader(call, 'Content-Length', '999');
          },
        }),
    });
    for (const path of ['/v1/shelves/s1', '/v1/shelves/s2', '/v1/shelves/s3']) {
      const r = await raw(h.port, path);
      expect(r.status, path).toBe(path.endsWith('s3') ? 403 : 200);
      expect(values(r.lines, 'content-type'), path).toEqual(['application/json']);
      expect(values(r.lines, 'content-length'), path).toEqual([String(Buffer.byteLength(r.body))]);
      JSON.parse(r.body);
    }
  });
});
