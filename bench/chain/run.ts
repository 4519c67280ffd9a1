/**
 * The cost of entry-core's middleware chain per call with the grpc entry's transport (its payload keys and grpc_server_* families): meta, prom and
 * logging (records to a file) together and one at a time, against an empty chain.
 * Run: node --import tsx bench/chain/run.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import {
  boot,
  CallContext,
  EventFactory,
  makeScope,
  type CallHeaders,
  type CallInfo,
  type CallMiddleware,
  type EventEntry,
} from '@svcboot/entry-core';
import {
  CallChain,
  LoggingMiddleware,
  MetaMiddleware,
  PromMiddleware,
  RPC_METHOD,
  type RpcMethod,
} from '@svcboot/entry-core/call';
import { grpcTransport } from '@svcboot/entry-grpc';
import { assertBuilt } from '../lib/built.js';

assertBuilt('entry-core', 'entry-grpc');

const CALLS = Number(process.env['BENCH_CALLS'] ?? 200_000);
const dir = await mkdtemp(path.join(os.tmpdir(), 'svcboot-bench-chain-'));
const app = await boot({
  argv: [],
  env: {},
  configText: `event:\n  - name: ev\n    outputPaths: ["${path.join(dir, 'events.log')}"]\n`,
});
const events = new EventFactory(
  app.entry<EventEntry>('ev', 'event').eventLogger,
  makeScope(
    'UTC',
    { appName: 'bench', appVersion: '1', entryName: 'greeter', entryType: 'GrpcEntry' },
    { domain: '*' },
  ),
);

const info: CallInfo = {
  operation: '/api.v1.Greeter/Hello',
  remoteAddr: '127.0.0.1:50000',
  apiMethod: 'POST',
  apiPath: '/api.v1.Greeter/Hello',
  apiProtocol: 'HTTP/2',
  apiQuery: '',
  userAgent: 'grpc-node-js/1.14.0',
};
/** The RPC, as the grpc entry sets it on each call (RPC_METHOD: one object per method). */
const rpc: RpcMethod = { service: 'api.v1.Greeter', method: 'Hello', type: 'UnaryServer' };
const headers: CallHeaders = { get: () => undefined, set: () => undefined };
const appInfo = { name: 'bench', version: '1', description: '' };
const envInfo = { arch: 'x64', domain: '*', hostname: 'h', localIP: '10.0.0.1', os: 'linux' };

function chainOf(kind: string): CallChain {
  const list: CallMiddleware[] = [];
  if (kind.includes('meta')) list.push(new MetaMiddleware(appInfo, envInfo));
  if (kind.includes('prom')) {
    const registry = new Registry();
    list.push(
      new PromMiddleware({
        registry,
        entryName: 'greeter',
        entryType: 'GrpcEntry',
        domain: '*',
        instance: 'h',
        transport: grpcTransport.metrics!(registry),
      }),
    );
  }
  if (kind.includes('logging')) list.push(new LoggingMiddleware(events, grpcTransport.payloads));
  return new CallChain(list);
}

async function time(kind: string): Promise<number> {
  const chain = chainOf(kind);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const call = new CallContext(info, headers);
    call.set(RPC_METHOD, rpc);
    chain.before(call);
    call.resCode = 'OK';
    chain.after(call);
    if ((i & 1023) === 0) await new Promise((r) => setImmediate(r));
  }
  return Number(process.hrtime.bigint() - t0) / CALLS / 1000;
}

const kinds = ['none', 'meta', 'prom', 'logging', 'meta+prom+logging'];
const results = new Map<string, number[]>(kinds.map((k) => [k, []]));
for (let round = 0; round < 3; round++) for (const k of kinds) results.get(k)!.push(await time(k));
await app.shutdown();
await rm(dir, { recursive: true, force: true });

console.log(`## chain\n`);
console.log(
  `> node ${process.version}, one process, no transport: ${CALLS} calls per round through each chain (a new CallContext, before, after), records to a file; the five chains take turns for 3 rounds and the best round of each is reported.\n`,
);
console.log('| middlewares | µs per call | over an empty chain, µs |');
console.log('|---|---:|---:|');
const base = Math.min(...results.get('none')!);
for (const k of kinds) {
  const best = Math.min(...results.get(k)!);
  console.log(`| ${k} | ${best.toFixed(2)} | ${(best - base).toFixed(2)} |`);
}
