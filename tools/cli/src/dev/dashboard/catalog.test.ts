import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { systemServices } from '../services.js';
import { readCatalog } from './catalog.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../..');

describe("the dashboard's catalog", () => {
  it("lists demo-chain's entries and the methods of its protos (api/chain/v1/chain.proto), without a running service", () => {
    const catalog = readCatalog(systemServices(path.join(repo, 'apps/demo-chain/svc.system.yaml')));
    expect(catalog.map((s) => s.name)).toEqual(['front', 'users', 'billing']);
    const front = catalog[0]!;
    expect(front.entries.map((e) => `${e.kind}/${e.name}`)).toEqual([
      'logger/quiet',
      'event/records',
      'grpc/front',
      'grpcclient/users',
      'httpclient/billing',
    ]);
    const grpc = front.entries.find((e) => e.kind === 'grpc')!;
    expect(grpc.problem).toBeUndefined();
    expect(grpc.port).toBe('${PORT:-8101}');
    const service = grpc.services.find((s) => s.name === 'chain.v1.Front');
    // As chain.proto declares them: GetAccount unary, WatchUsers a server stream of User.
    // front's boot.yaml: gwMappingFiles (a REST rule for GetAccount), logging and trace middleware.
    expect(grpc.protocols).toEqual(['gRPC', 'REST gateway']);
    expect(grpc.middleware).toEqual(['logging', 'trace']);
    expect(service?.methods.map((m) => m.rest)).toEqual([
      [{ verb: 'GET', path: '/v1/accounts/{id}' }],
      [],
    ]);
    expect(service?.methods.map(({ requestFields, responseFields, rest, ...m }) => m)).toEqual([
      {
        path: '/chain.v1.Front/GetAccount',
        name: 'GetAccount',
        requestType: 'GetAccountRequest',
        responseType: 'Account',
        clientStreaming: false,
        serverStreaming: false,
      },
      {
        path: '/chain.v1.Front/WatchUsers',
        name: 'WatchUsers',
        requestType: 'ListUsersRequest',
        responseType: 'User',
        clientStreaming: false,
        serverStreaming: true,
      },
    ]);
    // The fields the explorer's form offers: chain.proto's, by their JSON (lowerCamelCase) names.
    const [getAccount, watchUsers] = service?.methods ?? [];
    expect(getAccount?.requestFields).toEqual([
      { name: 'id', type: 'string', kind: 'scalar', repeated: false },
    ]);
    expect(watchUsers?.requestFields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'count:int32',
      'intervalMs:int32',
    ]);
    expect(getAccount?.responseFields.map((f) => `${f.name}:${f.kind}:${f.type}`)).toEqual([
      'id:scalar:string',
      'name:scalar:string',
      'balanceCents:scalar:int64',
      'users:message:Seen',
      'billing:message:Seen',
    ]);
    const billing = catalog[2]!;
    expect(billing.entries.find((e) => e.kind === 'httpserver')).toMatchObject({
      name: 'billing',
      services: [],
      problem: undefined,
    });
  });
});
