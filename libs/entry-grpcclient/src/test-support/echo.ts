import type { ServiceImpl } from '@svcboot/entry-grpc';
import type { Echo } from './gen/echo/v1/echo_pb.js';

/** The callee of the tests: tells what it saw of each call (deadline, request id, trace, tenant). */
export function echoService(replica: string): ServiceImpl<typeof Echo> {
  return {
    async call({ text }, ctx) {
      const first = (name: string): string => {
        const v = ctx.metadata.get(name)[0];
        return typeof v === 'string' ? v : '';
      };
      return {
        text,
        replica,
        deadlineMs: BigInt(ctx.deadline?.getTime() ?? 0),
        requestId: ctx.requestId,
        traceparent: first('traceparent'),
        tenant: first('x-tenant'),
        authorization: first('authorization'),
      };
    },
  };
}
