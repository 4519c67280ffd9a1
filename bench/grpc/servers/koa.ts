/** Bare Koa: one middleware answering GET /v1/hello with `{"message":"hello!"}`. */
import Koa from 'koa';
import { profileOnSignal } from './profiler.js';
import { HELLO, port } from './serve.js';

const app = new Koa();
app.use((ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/v1/hello') ctx.body = HELLO;
});
app.listen(port(), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
profileOnSignal();
