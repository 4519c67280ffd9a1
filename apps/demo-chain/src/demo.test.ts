import path from 'node:path';
import {
  type Client,
  type ClientReadableStream,
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Child, plainEnv, startOnFreePorts, waitFor } from '@svcboot/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDir, type Seen } from './services.js';

let demo: Child;
let front: string;
let frontPort: number;

interface Line {
  ids?: { requestId?: string; traceId?: string; spanId?: string };
  app?: { appName: string; entryName: string; entryType: string };
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  kind?: string;
  name?: string;
}

/** The JSON lines the demo printed: records (with `app`) and spans (with `kind`). */
function lines(): Line[] {
  return demo.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

beforeAll(async () => {
  // A free port can be taken before the demo listens on it: a demo that exited saying so
  // (EADDRINUSE) is started again on new ports.
  const started = await startOnFreePorts(
    3,
    ([port, users, billing]) =>
      Child.start(
        process.execPath,
        ['--conditions=svcboot-source', '--import', 'tsx', 'src/main.ts'],
        {
          cwd: appDir,
          env: plainEnv({
            PORT: String(port),
            USERS_PORT: String(users),
            BILLING_PORT: String(billing),
            SPANS_FILE: 'stdout',
          }),
        },
      ),
    {
      what: 'the demo to be ready',
      ready: (demo) => demo.stderr.includes('demo-chain ready'),
      timeoutMs: 60_000,
    },
  );
  demo = started.child;
  front = `http://127.0.0.1:${started.ports[0]}`;
  frontPort = started.ports[0]!;
}, 200_000);

afterAll(async () => {
  // SIGINT: SIGTERM would first wait out the drain delay for a load balancer (5 s).
  demo?.process.kill('SIGINT');
  await demo?.waitForExit();
});

describe('demo-chain', () => {
  it('one request id and one trace across front, users (gRPC) and billing (HTTP)', async () => {
    const res = await fetch(`${front}/v1/accounts/42`, {
      headers: { 'x-request-id': 'chain-req-1', 'grpc-timeout': '5000m' },
    });
    expect(res.status).toBe(200);
    const account = (await res.json()) as { name: string; users: Seen; billing: Seen };
    expect(account.name).toBe('user 42');
    expect(account.users.requestId).toBe('chain-req-1');
    expect(account.billing.requestId).toBe('chain-req-1');

    // The records of the request: the front's call, its two outbound calls, and one in each callee.
    let records: Line[] = [];
    await waitFor('five records of the request', () => {
      records = lines().filter((l) => l.app && l.ids?.requestId === 'chain-req-1');
      return records.length >= 5;
    });
    expect(records.map((r) => `${r.app?.appName}/${r.app?.entryType}`).sort()).toEqual([
      'billing/HttpEntry',
      'front/GrpcClientEntry',
      'front/GrpcEntry',
      'front/HttpClientEntry',
      'users/GrpcEntry',
    ]);
    const traceId = records[0]?.ids?.traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const r of records) expect(r.ids?.traceId).toBe(traceId);

    // The spans: each callee's server span is a child of the front's client span for it.
    await waitFor('the callees’ server spans', () => {
      const spans = lines().filter((l) => l.kind !== undefined && l.traceId === traceId);
      return spans.filter((s) => s.kind === 'server').length >= 3;
    });
    const spans = lines().filter((l) => l.kind !== undefined && l.traceId === traceId);
    for (const seen of [account.users, account.billing]) {
      const clientSpanId = seen.traceparent.split('-')[2];
      const client = spans.find((s) => s.spanId === clientSpanId);
      expect(client?.kind).toBe('client');
      expect(spans.some((s) => s.kind === 'server' && s.parentSpanId === clientSpanId)).toBe(true);
      const frontServer = spans.find((s) => s.spanId === client?.parentSpanId);
      expect(frontServer?.kind).toBe('server');
    }
  });

  it('the callees see the caller’s deadline, less the margin and never more than timeoutMs', async () => {
    // A caller with 900 ms: the callees get less, by the margin. A caller with 60 s: the clients'
    // timeoutMs (2000) caps what the callees get.
    for (const [timeout, most] of [
      ['900m', 890],
      ['60S', 2000],
    ] as const) {
      const seen = (await (
        await fetch(`${front}/v1/accounts/7`, { headers: { 'grpc-timeout': timeout } })
      ).json()) as { users: Seen; billing: Seen };
      for (const callee of [seen.users, seen.billing]) {
        expect(Number(callee.deadlineLeftMs)).toBeGreaterThan(0);
        expect(Number(callee.deadlineLeftMs)).toBeLessThanOrEqual(most);
      }
    }
  });
});

type FrontClient = Client & {
  WatchUsers(
    req: { count: number; intervalMs: number },
    metadata: Metadata,
  ): ClientReadableStream<{ id: string; name: string; seen: Seen }>;
};

describe('demo-chain: server streams', () => {
  it("front's WatchUsers relays users' ListUsers stream, message by message, with the request id", async () => {
    const definition = loadSync(path.join(appDir, 'api/chain/v1/chain.proto'), {
      includeDirs: [path.join(appDir, 'api')],
      defaults: true,
    });
    const Front = (
      loadPackageDefinition(definition) as unknown as {
        chain: { v1: { Front: new (...a: ConstructorParameters<typeof Client>) => FrontClient } };
      }
    ).chain.v1.Front;
    const client = new Front(`127.0.0.1:${frontPort}`, credentials.createInsecure());
    try {
      const md = new Metadata();
      md.set('x-request-id', 'chain-stream-1');
      const stream = client.WatchUsers({ count: 4, intervalMs: 5 }, md);
      const got: Array<{ id: string; name: string; requestId: string }> = [];
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (u) => got.push({ id: u.id, name: u.name, requestId: u.seen.requestId }));
        stream.on('error', (err: ServiceError) => reject(err));
        stream.on('end', () => resolve());
      });
      expect(got).toEqual(
        ['0', '1', '2', '3'].map((id) => ({ id, name: `user ${id}`, requestId: 'chain-stream-1' })),
      );
    } finally {
      client.close();
    }
  });
});
