/**
 * The NestJS interceptor of both Nest peers, as Nest's docs show a logging interceptor (an
 * `intercept` that runs `next.handle()` and taps its end), doing svcboot's per-call work with pino
 * and prom-client (same-work.ts): the six response headers, one log line and the metrics.
 *
 * Decorators are applied with `Reflect.decorate`, which is what tsc emits for `@Controller()`:
 * tsx (esbuild) would compile `@` syntax as standard decorators, which Nest's are not.
 */
import { Metadata, type ServerUnaryCall } from '@grpc/grpc-js';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type Observable, tap } from 'rxjs';
import { endCall, responseHeaders, startCall } from './same-work.js';

export class SameWorkInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return context.getType() === 'rpc' ? this.rpc(context, next) : this.http(context, next);
  }

  private rpc(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const md = context.switchToRpc().getContext<Metadata>();
    const call = context.getArgByIndex<ServerUnaryCall<unknown, unknown>>(2);
    const id = md.get('x-request-id')[0];
    const started = startCall(typeof id === 'string' ? id : undefined);
    const out = new Metadata();
    for (const [k, v] of Object.entries(responseHeaders(started))) out.set(k, v);
    call.sendMetadata(out);
    const method = `/${context.getClass().name}/${context.getHandler().name}`;
    const end = (code: string) => (): void =>
      endCall(started, {
        method,
        path: call.getPath(),
        remoteAddr: call.getPeer(),
        userAgent: String(md.get('user-agent')[0] ?? ''),
        code,
      });
    return next.handle().pipe(tap({ next: end('OK'), error: end('Unknown') }));
  }

  private http(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const started = startCall(req.get('x-request-id'));
    res.set(responseHeaders(started));
    const end = (): void =>
      endCall(started, {
        method: req.method,
        path: req.path,
        remoteAddr: req.ip ?? '',
        userAgent: req.get('user-agent') ?? '',
        code: String(res.statusCode),
      });
    return next.handle().pipe(tap({ next: end, error: end }));
  }
}
