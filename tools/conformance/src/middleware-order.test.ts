import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  CallContext,
  middlewareDefinitions,
  MiddlewareRegistry,
  type AnyMiddlewareDefinition,
  type CallHeaders,
  type CallInfo,
  type EntryContext,
  withMiddlewareRegistry,
} from '@svcboot/entry-core';
import {
  basicCallPayloads,
  buildCallChain,
  middlewareSchema,
  startCall,
  type CallAdapter,
} from '@svcboot/entry-core/call';
import { loadSheddingSchema } from '@svcboot/entry-core/toolkit';
import { validateDefinition } from '@svcboot/entry-grpc';
import { jwtDefinition } from '@svcboot/middleware-jwt';
import { traceDefinition } from '@svcboot/middleware-trace';

/**
 * The chain's order with every middleware svcboot ships switched on: the built-ins (meta, prom,
 * logging, load shedding), entry-core's definitions, entry-grpc's validate and the plugin
 * packages' trace and jwt. Pinned as it was with numbered slots (meta 100, prom 200, trace 250,
 * logging 300, load shedding 350, secure 360, cors 370, auth 400, jwt 410, csrf 420, rateLimit
 * 450, timeout 500, validate 600), so that placing middlewares by phase changed no chain.
 */
const EXPECTED = [
  'meta',
  'prom',
  'trace',
  'logging',
  'secure',
  'cors',
  'auth',
  'jwt',
  'csrf',
  'rateLimit',
  'timeout',
  'validate',
];

const info: CallInfo = {
  operation: 'GET /v1/x',
  remoteAddr: '127.0.0.1:1',
  apiMethod: 'GET',
  apiPath: '/v1/x',
  apiProtocol: 'HTTP/1.1',
  apiQuery: '',
  userAgent: 'test',
};

/** Every definition, as the packages define it, but creating a probe that notes its key. */
function probed(seen: string[]): AnyMiddlewareDefinition[] {
  return [...middlewareDefinitions, validateDefinition, traceDefinition, jwtDefinition].map(
    (d) => ({
      ...d,
      create: () => ({ before: () => void seen.push(d.key) }),
    }),
  );
}

/** The `before`s run, in order, on one call through a chain of them all (`shedAll`: load shedding refuses it). */
function run(shedAll: boolean): string[] {
  const seen: string[] = [];
  const registry = new MiddlewareRegistry(probed(seen));
  const keys = registry.list().map((d) => d.key);
  // The built-ins' options parsed; the probes' need no more than `enabled`.
  const config = {
    ...withMiddlewareRegistry(new MiddlewareRegistry([]), () =>
      middlewareSchema.parse({
        meta: { enabled: true },
        prom: { enabled: true },
        logging: { enabled: true },
      }),
    ),
    ...Object.fromEntries(keys.map((k) => [k, { enabled: true, ignore: [] }])),
  } as ReturnType<typeof middlewareSchema.parse>;
  let metaSeen = false;
  const headers: CallHeaders = {
    get: () => undefined,
    set: () => {
      if (!metaSeen) seen.push('meta');
      metaSeen = true;
    },
  };
  const ctx = {
    app: { name: 'demo', version: '1.0.0', description: '' },
    env: { arch: 'x64', domain: 'test', hostname: 'h', localIP: '1.2.3.4', os: 'linux' },
    middlewares: registry,
    configPath: 'grpc[e]',
    // The logging middleware's records: noted when one begins.
    events: {
      begin: () => {
        seen.push('logging');
        return {};
      },
      write: () => undefined,
    },
  } as unknown as EntryContext;
  const chain = buildCallChain(config, ctx, {
    entryName: 'e',
    entryType: 'T',
    registry: new Registry(),
    // The prom middleware feeds the transport's families first thing in its `before`.
    transport: {
      payloads: basicCallPayloads,
      metrics: () => ({ before: () => void seen.push('prom'), after: () => undefined }),
    },
    // Only the in-flight check: at most one call in flight.
    loadShedding: loadSheddingSchema.parse({
      maxInFlight: 1,
      maxEventLoopDelayMs: 0,
      maxEventLoopUtilization: 0,
    }),
  });
  const adapter: CallAdapter = { proceed: () => undefined, refuse: () => undefined };
  if (shedAll) {
    // A call that stays in flight: the next one is one too many.
    void startCall(chain, new CallContext(info, headers), adapter);
    seen.length = 0;
    metaSeen = false;
  }
  const call = new CallContext(info, headers);
  void startCall(chain, call, adapter);
  if (shedAll) expect(call.rejection?.source?.middleware).toBe('loadShedding');
  return seen;
}

describe('the chain order of every middleware svcboot ships', () => {
  it('is meta, prom, trace, logging, (load shedding), secure, cors, auth, jwt, csrf, rateLimit, timeout, validate', () => {
    expect(run(false)).toEqual(EXPECTED);
  });

  it('sheds right after the record is begun: before any header or guard', () => {
    expect(run(true)).toEqual(['meta', 'prom', 'trace', 'logging']);
  });
});
