// The callee of the httpclient bench: a bare node:http server answering every request with a
// 16-byte body. Prints `READY <port>`.
import { createServer } from 'node:http';

const body = Buffer.alloc(16);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 16 });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as { port: number }).port}\n`);
});
