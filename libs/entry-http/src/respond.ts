import type { Context } from 'koa';

/**
 * Answers `status` with the error serialised as JSON: `{"error": "<message>"}` (ARCHITECTURE.md
 * §6). The error is also attached to the call's record.
 */
export function respondError(ctx: Context, status: number, err: unknown): void {
  const message = err instanceof Error ? err.message || err.name : String(err);
  ctx.state.error = err;
  ctx.status = status;
  ctx.body = { error: message };
}
