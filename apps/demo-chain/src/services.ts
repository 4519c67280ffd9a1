import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  loadPackageDefinition,
  Metadata,
  status,
  type Client,
  type ServiceDefinition,
  type ServiceError,
  type ClientReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { App, InboundCall } from '@svcboot/entry-core';
import { callContextOf, grpcEntry } from '@svcboot/entry-grpc';
import { grpcClient } from '@svcboot/entry-grpcclient';
import { httpEntry } from '@svcboot/entry-http';
import { HttpClientCallError, httpClient } from '@svcboot/entry-httpclient';

export const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What a callee saw of a call (chain.v1.Seen). */
export interface Seen {
  requestId: string;
  traceparent: string;
  deadlineLeftMs: number;
}
interface User {
  id: string;
  name: string;
  seen: Seen;
}
interface Account {
  id: string;
  name: string;
  balanceCents: number;
  users: Seen;
  billing: Seen;
}

const definition = loadSync(path.join(appDir, 'api/chain/v1/chain.proto'), {
  includeDirs: [path.join(appDir, 'api')],
  longs: Number,
  defaults: true,
});
const frontService = definition['chain.v1.Front'] as ServiceDefinition;
const usersService = definition['chain.v1.Users'] as ServiceDefinition;

interface ListUsersRequest {
  count: number;
  intervalMs: number;
}
type UsersClient = Client & {
  GetUser(
    request: { id: string },
    callback: (err: ServiceError | null, user: User) => void,
  ): unknown;
  ListUsers(request: ListUsersRequest): ClientReadableStream<User>;
};
const grpcObject = loadPackageDefinition(definition) as unknown as {
  chain: { v1: { Users: new (...args: ConstructorParameters<typeof Client>) => UsersClient } };
};

/** The time left until a deadline in ms since the epoch; 0 without one. */
function leftMs(deadline: number): number {
  return deadline === Infinity ? 0 : Math.max(0, Math.round(deadline - Date.now()));
}

/** users: GetUser answers the user and what it saw of the call (request id, trace, deadline). */
export function serveUsers(app: App): void {
  grpcEntry(app, 'users').addService(usersService, {
    GetUser(call: ServerUnaryCall<{ id: string }, User>, done: sendUnaryData<User>) {
      const ctx = callContextOf(call);
      const traceparent = call.metadata.get('traceparent')[0];
      done(null, {
        id: call.request.id,
        name: `user ${call.request.id}`,
        seen: {
          requestId: ctx?.requestId ?? '',
          traceparent: typeof traceparent === 'string' ? traceparent : '',
          deadlineLeftMs: leftMs(ctx?.deadline ?? Infinity),
        },
      });
    },
    /** ListUsers: `count` users (at most 1000), one every `intervalMs`, then the end. */
    ListUsers(call: ServerWritableStream<ListUsersRequest, User>) {
      const count = Math.min(Math.max(call.request.count, 0), 1000);
      const ctx = callContextOf(call);
      const seen = { requestId: ctx?.requestId ?? '', traceparent: '', deadlineLeftMs: 0 };
      let sent = 0;
      const next = () => {
        if (call.cancelled) return;
        if (sent >= count) {
          call.end();
          return;
        }
        call.write({ id: String(sent), name: `user ${sent}`, seen });
        sent++;
        timer = setTimeout(next, Math.max(call.request.intervalMs, 0));
      };
      let timer = setTimeout(next, 0);
      call.on('cancelled', () => clearTimeout(timer));
    },
  });
}

/** billing: GET /v1/balance/:user, with what it saw (the deadline from the Grpc-Timeout header). */
export function serveBilling(app: App): void {
  httpEntry(app, 'billing').router.get('/v1/balance/:user', (ctx) => {
    const timeout = /^(\d+)m$/.exec(ctx.get('grpc-timeout'));
    ctx.body = {
      user: ctx.params.user,
      balanceCents: 4200,
      seen: {
        requestId: ctx.state.call?.requestId ?? '',
        traceparent: ctx.get('traceparent'),
        deadlineLeftMs: timeout ? Number(timeout[1]) : 0,
      },
    };
  });
}

/** front: GetAccount (also GET /v1/accounts/{id}) calls users over gRPC and billing over HTTP. */
export function serveFront(app: App): void {
  grpcEntry(app, 'front').addService(frontService, {
    GetAccount(call: ServerUnaryCall<{ id: string }, Account>, done: sendUnaryData<Account>) {
      const inbound = callContextOf(call);
      getAccount(app, call.request.id, inbound).then(
        (account) => done(null, account),
        (err: unknown) => done(toServiceError(err)),
      );
    },
    /** WatchUsers: users' ListUsers, message by message; its failure as the front's own status. */
    WatchUsers(call: ServerWritableStream<ListUsersRequest, User>) {
      const users = grpcClient(app, 'users').plain(grpcObject.chain.v1.Users, callContextOf(call));
      const upstream = users.ListUsers(call.request);
      let over = false;
      upstream.on('data', (user: User) => call.write(user));
      upstream.on('end', () => {
        if (!over) call.end();
        over = true;
      });
      upstream.on('error', (err: unknown) => {
        if (!over) call.emit('error', toServiceError(err));
        over = true;
      });
      call.on('cancelled', () => {
        over = true;
        upstream.cancel();
      });
    },
  });
}

async function getAccount(
  app: App,
  id: string,
  inbound: InboundCall | undefined,
): Promise<Account> {
  const users = grpcClient(app, 'users').plain(grpcObject.chain.v1.Users, inbound);
  const [user, balance] = await Promise.all([
    new Promise<User>((resolve, reject) =>
      users.GetUser({ id }, (err, u) => (err ? reject(err) : resolve(u))),
    ),
    httpClient(app, 'billing')
      .fetch(`/v1/balance/${encodeURIComponent(id)}`, { call: inbound, route: '/v1/balance/:user' })
      .then(async (res) => {
        if (!res.ok)
          throw new HttpClientCallError('SVC_DEMO_BILLING', `billing answered ${res.status}`, 502);
        return (await res.json()) as { balanceCents: number; seen: Seen };
      }),
  ]);
  return {
    id,
    name: user.name,
    balanceCents: balance.balanceCents,
    users: user.seen,
    billing: balance.seen,
  };
}

/** A failed outbound call as the front's own gRPC status (no backend text passed on). */
function toServiceError(err: unknown): Partial<ServiceError> {
  if (err instanceof HttpClientCallError)
    return {
      code: err.status === 504 ? status.DEADLINE_EXCEEDED : status.UNAVAILABLE,
      details: 'billing is unavailable',
      metadata: new Metadata(),
    };
  const code = (err as { code?: number }).code;
  return {
    code: code === status.DEADLINE_EXCEEDED ? code : status.UNAVAILABLE,
    details: 'users is unavailable',
    metadata: new Metadata(),
  };
}
