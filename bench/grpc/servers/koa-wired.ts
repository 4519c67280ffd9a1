/**
 * The hand-wired HTTP peer: bare Koa plus one middleware doing svcboot's per-call work with pino
 * and prom-client (same-work.ts): the six response headers, one log line and the metrics per call.
 */
import Koa from 'koa';
import { endCall, exitOnSigterm, responseHeaders, startCall } from './same-work.js';
import { HELLO, port } from './serve.js';

const app = new Koa();
app.use(async (ctx, next) => {
  const started = startCall(ctx.get('x-request-id') || undefined);
  ctx.set(responseHeaders(started));
  try {
    await next();
  } finally {
    endCall(started, {
      method: ctx.method,
      path: ctx.path,
      remoteAddr: ctx.ip,
      userAgent: ctx.get('user-agent'),
      code: String(ctx.status),
    });
  }
});
app.use((ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/v1/hello') ctx.body = HELLO;
});
app.listen(port(), '127.0.0.1');
exitOnSigterm();
