// First: grpc-js must load with GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true to ask the test's DNS server.
import './test-support/alternative-resolver.js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { boot, type App } from '@svcboot/entry-core';
import { afterAll, describe, expect, it } from 'vitest';
import { grpcClient } from './index.js';
import { DnsServer } from '@svcboot/testkit';
import {
  CallReplySchema,
  CallRequestSchema,
  Echo,
  type CallReply,
  type CallRequest,
} from './test-support/gen/echo/v1/echo_pb.js';
import { until } from './test-support/processes.js';

/** Echo's one method as a grpc-js service definition (the replicas are plain grpc-js servers). */
const echoDefinition: ServiceDefinition = {
  call: {
    path: '/echo.v1.Echo/Call',
    requestStream: false,
    responseStream: false,
    requestSerialize: (m: CallRequest) => Buffer.from(toBinary(CallRequestSchema, m)),
    requestDeserialize: (b: Buffer) => fromBinary(CallRequestSchema, b),
    responseSerialize: (m: CallReply) => Buffer.from(toBinary(CallReplySchema, m)),
    responseDeserialize: (b: Buffer) => fromBinary(CallReplySchema, b),
  },
};

/**
 * A replica on `host:port`: a grpc-js server; with `maxConnectionAgeMs`, its connections live at
 * most that long (the server's `grpc.max_connection_age_ms`, gRFC A9), so that clients reconnect,
 * and re-resolve, often.
 */
async function replica(
  name: string,
  host: string,
  port: number,
  maxConnectionAgeMs?: number,
): Promise<{ server: Server; port: number }> {
  const server = new Server(
    maxConnectionAgeMs === undefined ? {} : { 'grpc.max_connection_age_ms': maxConnectionAgeMs },
  );
  server.addService(echoDefinition, {
    call: (call: { request: CallRequest }, done: (err: null, reply: CallReply) => void) =>
      done(null, create(CallReplySchema, { text: call.request.text, replica: name })),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, port: bound };
}

describe('a dns:// target with a DNS server of its own', () => {
  const cleanup: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('a replica that appears in DNS gets traffic once the client re-resolves (on a closed connection)', async () => {
    const dns = await DnsServer.start();
    cleanup.push(() => dns.close());
    const a = await replica('a', '127.0.0.1', 0, 300);
    cleanup.push(() => a.server.forceShutdown());
    // The second replica on the same port of another loopback address: a pod of the same service.
    const b = await replica('b', '127.0.0.2', a.port, 300);
    cleanup.push(() => b.server.forceShutdown());
    dns.set('echo.svc.test', ['127.0.0.1']);

    const app: App = await boot({
      configText: `app: { name: caller }
logger: [{ name: quiet, level: error }]
grpcclient:
  - name: echo
    target: dns://127.0.0.1:${dns.port}/echo.svc.test:${a.port}
    loadBalancing: round_robin
    timeoutMs: 5000
    dnsMinIntervalMs: 100
    resolveIntervalMs: 0
    retry: { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 50 }
`,
      argv: [],
      env: {},
    });
    cleanup.push(() => app.shutdown('test'));
    await app.bootstrap();
    const client = grpcClient(app, 'echo').client(Echo);

    const replies: string[] = [];
    const call = async (): Promise<void> => {
      replies.push((await client.call({ text: 'hi' })).replica);
    };
    for (let i = 0; i < 5; i++) await call();
    expect(new Set(replies)).toEqual(new Set(['a']));
    expect(dns.queries.get('echo.svc.test')).toBeGreaterThanOrEqual(1);

    // b appears in DNS (a scale-up); a's connection reaches its max age, the client re-resolves
    // and round_robin sends to both. No call fails meanwhile.
    dns.set('echo.svc.test', ['127.0.0.1', '127.0.0.2']);
    const queried = dns.queries.get('echo.svc.test') ?? 0;
    replies.length = 0;
    await until(
      async () => {
        await call();
        return replies.includes('b');
      },
      20_000,
      'replica b to answer',
    );
    expect(dns.queries.get('echo.svc.test')).toBeGreaterThan(queried);
    // Once both are known, calls go to both.
    replies.length = 0;
    await until(
      async () => {
        await call();
        return replies.includes('a') && replies.includes('b');
      },
      20_000,
      'both replicas to answer',
    );
  });

  it('with resolveIntervalMs, a replica that appears in DNS gets traffic while every connection stays open', async () => {
    const dns = await DnsServer.start();
    cleanup.push(() => dns.close());
    // No maximum connection age: the servers never close a connection, nor does any call fail.
    const a = await replica('a', '127.0.0.1', 0);
    cleanup.push(() => a.server.forceShutdown());
    const b = await replica('b', '127.0.0.2', a.port);
    cleanup.push(() => b.server.forceShutdown());
    dns.set('timer.svc.test', ['127.0.0.1']);

    const app: App = await boot({
      configText: `app: { name: caller }
logger: [{ name: quiet, level: error }]
grpcclient:
  - name: echo
    target: dns://127.0.0.1:${dns.port}/timer.svc.test:${a.port}
    loadBalancing: round_robin
    timeoutMs: 5000
    dnsMinIntervalMs: 50
    resolveIntervalMs: 200
`,
      argv: [],
      env: {},
    });
    cleanup.push(() => app.shutdown('test'));
    await app.bootstrap();
    const entry = grpcClient(app, 'echo');
    expect(entry.target).toBe(`svcboot-dns://127.0.0.1:${dns.port}/timer.svc.test:${a.port}`);
    const client = entry.client(Echo);
    const replies: string[] = [];
    const call = async (): Promise<void> => {
      replies.push((await client.call({ text: 'hi' })).replica);
    };
    for (let i = 0; i < 3; i++) await call();
    expect(new Set(replies)).toEqual(new Set(['a']));

    // The timer asks DNS again while calls go on, though no connection failed or closed.
    const queried = dns.queries.get('timer.svc.test') ?? 0;
    await until(
      async () => {
        await call();
        return (dns.queries.get('timer.svc.test') ?? 0) > queried + 1;
      },
      20_000,
      'the client to resolve again on its timer',
    );
    dns.set('timer.svc.test', ['127.0.0.1', '127.0.0.2']);
    replies.length = 0;
    await until(
      async () => {
        await call();
        return replies.includes('a') && replies.includes('b');
      },
      20_000,
      'both replicas to answer',
    );
  });
});
