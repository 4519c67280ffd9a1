/**
 * How every bare peer serves: a Koa app with one router on 127.0.0.1:$PORT, stopped on SIGTERM
 * after `close` (its client's quit/end) has run.
 */
import type Router from '@koa/router';
import Koa from 'koa';

export function serveBare(router: Router, close: () => Promise<unknown>): void {
  const app = new Koa();
  app.use(router.routes());
  const server = app.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
  process.once('SIGTERM', () => {
    server.close();
    void close().finally(() => process.exit(0));
  });
}

/** 500 with `{ error }`, as the demos answer a failed backend call. */
export function answerError(ctx: Koa.Context, err: unknown): void {
  ctx.status = 500;
  ctx.body = { error: (err as Error).message };
}
