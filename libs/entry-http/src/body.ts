import type { Context, Next } from 'koa';

declare module 'koa' {
  interface Request {
    /** The request body as text (empty when there is none), read up to the entry's body limit. */
    rawBody: string;
  }
}

const NO_BODY = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);
const EMPTY = Buffer.alloc(0);

/** A request body over the entry's limit: answered 413 (see respondTooLarge). */
export class BodyTooLarge extends Error {
  constructor(
    readonly limit: number,
    /** Found while reading (no Content-Length said so): the connection is closed after the answer. */
    readonly midStream: boolean,
  ) {
    super(`request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLarge';
  }
}

/** Whether the request says it has a body worth reading. */
function hasBody(ctx: Context): boolean {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared === 0 && ctx.get('transfer-encoding') === '') return false;
  return !(NO_BODY.has(ctx.method) && declared === 0);
}

/**
 * The whole request body, up to `limit` bytes (empty when the request has none); rejects with
 * BodyTooLarge beyond. Used by `readBody` and, through `call.body()`, by middlewares (CSRF's form
 * token), which read it before the handler: `readBody` then takes the same bytes.
 */
export async function readRequestBody(ctx: Context, limit: number): Promise<Buffer> {
  if (!hasBody(ctx)) return EMPTY;
  if (Number(ctx.get('content-length') || 0) > limit) {
    ctx.req.resume();
    throw new BodyTooLarge(limit, false);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge(limit, true);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** The 413 answer for a body over the limit. */
export function respondTooLarge(ctx: Context, err: BodyTooLarge): void {
  ctx.status = 413;
  if (err.midStream) ctx.set('Connection', 'close');
  ctx.body = { error: err.message };
}

/** Reads request bodies up to `limit` bytes into `ctx.request.rawBody`; larger ones get 413. */
export function readBody(limit: number) {
  return async function bodyReader(ctx: Context, next: Next): Promise<void> {
    ctx.request.rawBody = '';
    // A middleware may have read it already (call.body()).
    const pending =
      ctx.state.call?.bodyRequested ?? (hasBody(ctx) ? readRequestBody(ctx, limit) : undefined);
    if (pending !== undefined) {
      try {
        ctx.request.rawBody = (await pending).toString('utf8');
      } catch (err) {
        if (!(err instanceof BodyTooLarge)) throw err;
        respondTooLarge(ctx, err);
        return;
      }
    }
    await next();
  };
}

/** Parses `ctx.request.rawBody` as JSON; throws a SyntaxError the handler can turn into its own status. */
export function jsonBody<T = unknown>(ctx: Context): T {
  return JSON.parse(ctx.request.rawBody) as T;
}
