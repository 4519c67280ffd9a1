/** The HTTP floor: a node:http responder for GET /v1/hello, no framework, no routing table. */
import http from 'node:http';
import { HELLO_JSON, port } from './serve.js';

const BODY = Buffer.from(HELLO_JSON);
const HEADERS = { 'content-type': 'application/json', 'content-length': BODY.length };

http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/hello') {
      res.writeHead(200, HEADERS);
      res.end(BODY);
    } else {
      res.writeHead(404).end();
    }
  })
  .listen(port(), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
