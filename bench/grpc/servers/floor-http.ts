/** The HTTP floor: a node:http responder for GET /v1/hello, no framework, no routing table. */
import http from 'node:http';
import { HELLO_JSON, port } from './serve.js';

const BODY = Buffer.from(HELLO_JSON);
const HEADERS = { 'content-type': 'application/json', 'content-length': BODY.length };
/**
 * FLOOR_META=1: also the six response headers of svcboot's meta middleware (ARCHITECTURE.md
 * §5.2; a request id and the time formatted per call, the rest fixed): what node:http itself
 * spends on them (bench/grpc/middleware-cost.sh).
 */
const meta = process.env['FLOOR_META'] === '1';
let id = 0;

http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/hello') {
      if (meta) {
        const now = new Date().toISOString();
        res.writeHead(200, [
          'content-type',
          'application/json',
          'content-length',
          String(BODY.length),
          'X-Request-Id',
          `00000000-0000-4000-8000-${String(++id).padStart(12, '0')}`,
          'X-Svc-App-Domain',
          '*',
          'X-Svc-App-Name',
          'bench-grpc',
          'X-Svc-App-Unix-Time',
          now,
          'X-Svc-App-Version',
          '1.0.0',
          'X-Svc-Received-Time',
          now,
        ]);
      } else res.writeHead(200, HEADERS);
      res.end(BODY);
    } else {
      res.writeHead(404).end();
    }
  })
  .listen(port(), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
