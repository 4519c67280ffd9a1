import { CallRejection } from '@svcboot/entry-core';
import { RPC_METHOD } from '@svcboot/entry-core/call';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibrary, unary, type Harness } from './test-support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("a middleware's rejection on gRPC and gateway calls", () => {
  it('is counted in svc_call_rejections_total and named in the record (rejectedBy, rejectReason)', async () => {
    h = await startLibrary('', {
      setup: (entry) =>
        entry.useMiddleware('authn', {
          before(call) {
            const rpc = call.get(RPC_METHOD)?.method;
            if (rpc === 'Ping' || rpc === 'GetShelf')
              throw new CallRejection(
                'PermissionDenied',
                'not you',
                {},
                {
                  middleware: 'probe',
                  reason: 'not_you',
                },
              );
          },
        }),
    });
    const grpc = await unary(h.client, 'Ping', { text: 'a' });
    expect(grpc.error?.code).toBe(7);
    const gw = await fetch(`${h.base}/v1/shelves/s1`);
    expect(gw.status).toBe(403);
    await gw.arrayBuffer();
    const metrics = await (await fetch(`${h.base}/metrics`)).text();
    expect(metrics).toContain(
      'svc_call_rejections_total{entry_name="lib",middleware="probe",reason="not_you"} 2',
    );
    const records = await h.stop();
    h = undefined;
    const refused = records.filter((r) => r['resCode'] === 'PermissionDenied');
    expect(refused.map((r) => [r['operation'], r['pairs'], r['error']])).toEqual([
      [
        '/test.v1.Library/Ping',
        { rejectedBy: 'probe', rejectReason: 'not_you' },
        expect.stringContaining('not you'),
      ],
      [
        '/test.v1.Library/GetShelf',
        { rejectedBy: 'probe', rejectReason: 'not_you' },
        expect.stringContaining('not you'),
      ],
    ]);
  });
});
