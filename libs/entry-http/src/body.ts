import type { Context, Next } from 'koa';

declare module 'koa' {
  interface Request {
    /** The request body as text (empty when there is none), read up to the entry's body limit. */
    rawBody: string;
  }
}

const NO_BODY = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

/** Reads request bodies up to `limit` bytes into `ctx.request.rawBody`; larger ones get 413. */
export function readBody(limit: number) {
  return async function bodyReader(ctx: Context, next: Next): Promise<void> {
    ctx.request.rawBody = '';
    const declared = Number(ctx.get('content-length') || 0);
    const hasBody = declared > 0 || ctx.get('transfer-encoding') !== '';
    if (!hasBody || (NO_BODY.has(ctx.method) && declared === 0)) {
      await next();
      return;
    }
    if (declared > limit) {
      tooLarge(ctx, limit);
      ctx.req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        tooLarge(ctx, limit);
        ctx.set('Connection', 'close');
        return;
      }
      chunks.push(chunk);
    }
    ctx.request.rawBody = Buffer.concat(chunks, size).toString('utf8');
    await next();
  };
}

function tooLarge(ctx: Context, limit: number): void {
  ctx.status = 413;
  ctx.body = { error: `request body is larger than ${limit} bytes` };
}

/** Parses `ctx.request.rawBody` as JSON; throws a SyntaxError the handler can turn into its own status. */
export function jsonBody<T = unknown>(ctx: Context): T {
  return JSON.parse(ctx.request.rawBody) as T;
}
