/** The floor of the shed-cost comparison: node:http by hand answering `ok` on PORT. */
import http from 'node:http';

http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': '2' });
    res.end('ok');
  })
  .listen(Number(process.env['PORT']), '127.0.0.1');
