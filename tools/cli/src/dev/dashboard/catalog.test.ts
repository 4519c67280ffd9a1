import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { systemServices } from '../services.js';
import type { DevService } from '../services.js';
import { readCatalog } from './catalog.js';
import { matchesPath } from './guards.js';
import { protoDocs, validationRules } from './proto-docs.js';

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
    expect(
      service?.methods.map(
        ({ requestFields, responseFields, rest, comment, guards, responseComment, ...m }) => m,
      ),
    ).toEqual([
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
    // chain.proto's comments, as protobufjs reads them (the service's own, from its folder).
    expect(service?.comment).toBe(
      'The front service (gRPC and REST through the gateway): an account, from the users service over\ngRPC and the billing service over HTTP.',
    );
    expect(service?.methods.map((m) => m.comment)).toEqual([
      undefined,
      'Streams the users the users service lists (a server stream through a server stream).',
    ]);
    // GetAccount's request has no comment (no key in the JSON); User's neither.
    expect(service?.methods.map((m) => [m.requestComment, m.responseComment])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(getAccount?.responseFields.find((f) => f.name === 'users')?.comment).toBe(
      "What each callee saw of the call the front made on this one's behalf.",
    );
    // Neither logging nor trace has an ignore list: both see every method.
    expect(getAccount?.guards).toEqual([
      { middleware: 'logging', applies: true, note: undefined },
      { middleware: 'trace', applies: true, note: undefined },
    ]);
    const billing = catalog[2]!;
    expect(billing.entries.find((e) => e.kind === 'httpserver')).toMatchObject({
      name: 'billing',
      services: [],
      problem: undefined,
    });
  });
});

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/guarded');
const guarded: DevService = {
  name: 'greeter',
  dir: fixture,
  configFile: path.join(fixture, 'boot.yaml'),
  args: [],
  launch: { command: 'node', args: [], build: undefined, describe: 'none' },
  sourceDirs: [],
  calls: [],
};

describe("the catalog's comments, validation rules and guards (fixtures/guarded)", () => {
  const entry = readCatalog([guarded])[0]!.entries[0]!;
  const greeter = entry.services[0]!;
  const [hello, count] = greeter.methods;

  it('has the leading comments of the service, its methods and fields', () => {
    expect(entry.problem).toBeUndefined();
    expect(greeter.name).toBe('fix.v1.Greeter');
    expect(greeter.comment).toBe('Greets people, within limits.');
    expect(hello?.comment).toBe('Says hello to one person.');
    expect(count?.comment).toBe('how many greeted (a trailing comment)');
    expect(hello?.requestFields.map((f) => f.comment)).toEqual([
      'Who to greet: lower-case letters.',
      undefined,
    ]);
    expect(hello?.responseFields[0]?.comment).toBe('The greeting.');
    expect(hello?.requestComment).toBe('Whom to greet, how many times.');
    expect(hello).not.toHaveProperty('responseComment');
  });

  it("has each request field's buf.validate rules, and none on fields without", () => {
    expect(hello?.requestFields).toEqual([
      {
        name: 'name',
        type: 'string',
        kind: 'scalar',
        repeated: false,
        comment: 'Who to greet: lower-case letters.',
        rules: ['min_len: 1', 'max_len: 10', 'pattern: "^[a-z]+$"'],
      },
      {
        name: 'times',
        type: 'int32',
        kind: 'scalar',
        repeated: false,
        rules: ['gt: 0', 'lte: 5', 'required: true'],
      },
    ]);
    expect(count?.requestFields).toEqual([]);
    expect(count?.responseFields[0]).not.toHaveProperty('rules');
  });

  it("says which of the entry's middleware each method goes through, by their ignore lists", () => {
    expect(entry.middleware).toEqual(['logging', 'jwt', 'auth', 'rateLimit', 'timeout']);
    expect(hello?.guards).toEqual([
      { middleware: 'logging', applies: true, note: undefined },
      { middleware: 'jwt', applies: true, note: undefined },
      // auth's ignore names the REST route's paths only: gRPC calls still go through it.
      { middleware: 'auth', applies: true, note: 'not on POST /v1/hello/{name}' },
      { middleware: 'rateLimit', applies: true, note: '5/s (paths: /fix.v1.Greeter/*)' },
      { middleware: 'timeout', applies: true, note: '900 ms (paths: /fix.v1.Greeter/)' },
    ]);
    // middleware.ignore names Count's REST route: every middleware skips its gateway calls.
    expect(count?.guards.map((g) => [g.middleware, g.applies, g.note])).toEqual([
      ['logging', true, 'not on GET /v1/count'],
      ['jwt', false, 'ignore: /fix.v1.Greeter/Count'],
      ['auth', true, 'not on GET /v1/count'],
      ['rateLimit', true, 'not on GET /v1/count; 5/s (paths: /fix.v1.Greeter/*)'],
      // The first `paths` item naming the method, as the timeout middleware picks it.
      ['timeout', true, 'not on GET /v1/count; 500 ms (paths: /fix.v1.Greeter/Count)'],
    ]);
  });

  it("matches ignore patterns as entry-core does: the path, a prefix ending in '/', globs", () => {
    expect(matchesPath('/pkg.Svc/M', '/pkg.Svc/M')).toBe(true);
    expect(matchesPath('/pkg.Svc/M', '/pkg.Svc/Mx')).toBe(false);
    expect(matchesPath('/pkg.Svc/', '/pkg.Svc/M')).toBe(true);
    expect(matchesPath('/pkg.Svc/*', '/pkg.Svc/M')).toBe(true);
    expect(matchesPath('/v1/*', '/v1/a/b')).toBe(false);
    expect(matchesPath('/v1/**', '/v1/a/b')).toBe(true);
    expect(matchesPath('/pkg.Svc/*', '/pkgXSvc/M')).toBe(false);
  });

  it('reads rules from protobufjs option keys, leaving other options out', () => {
    expect(
      validationRules({
        deprecated: true,
        '(buf.validate.field).repeated.items.string.min_len': 2,
        '(buf.validate.field).cel.expression': 'this > 0',
      }),
    ).toEqual(['items.string.min_len: 2', 'expression: "this > 0"']);
  });

  it('gives no docs, rather than an error, when protobufjs is not there or cannot load the files', () => {
    // From the file system's root protobufjs does not resolve.
    expect(protoDocs(path.parse(fixture).root, ['fix/v1/greeter.proto'], [])).toBeUndefined();
    expect(
      protoDocs(fixture, ['fix/v1/missing.proto'], [path.join(fixture, 'api')]),
    ).toBeUndefined();
    expect(protoDocs(fixture, ['fix/v1/greeter.proto'], [path.join(fixture, 'api')])).toBeTypeOf(
      'function',
    );
  });
});
