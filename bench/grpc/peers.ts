/** The servers of the gRPC/gateway benchmark: one module each under servers/, and what they are. */
export type Path = 'grpc' | 'gateway' | 'connect';

export type Role = 'floor' | 'bare' | 'wired' | 'nest' | 'svc-none' | 'svc-all';

export interface Peer {
  id: string;
  /** The module under servers/ that serves it. */
  module: string;
  label: string;
  role: Role;
  /** The paths it serves (the svcboot servers serve both on one port). */
  paths: readonly Path[];
  env?: Record<string, string>;
}

export const PEERS: readonly Peer[] = [
  {
    id: 'floor-h2',
    module: 'floor-h2',
    label: 'floor: node:http2 gRPC responder',
    role: 'floor',
    paths: ['grpc'],
  },
  {
    id: 'floor-http',
    module: 'floor-http',
    label: 'floor: node:http responder',
    role: 'floor',
    paths: ['gateway'],
  },
  {
    id: 'grpc-js',
    module: 'grpc-js',
    label: 'bare @grpc/grpc-js (its defaults)',
    role: 'bare',
    paths: ['grpc'],
  },
  { id: 'koa', module: 'koa', label: 'bare Koa', role: 'bare', paths: ['gateway'] },
  {
    id: 'grpc-js-wired',
    module: 'grpc-js-wired',
    label: 'hand-wired: grpc-js + interceptor (pino, prom-client, headers)',
    role: 'wired',
    paths: ['grpc'],
  },
  {
    id: 'koa-wired',
    module: 'koa-wired',
    label: 'hand-wired: Koa + middleware (pino, prom-client, headers)',
    role: 'wired',
    paths: ['gateway'],
  },
  {
    id: 'nest-grpc',
    module: 'nest-grpc',
    label: 'NestJS microservice (gRPC) + interceptor (pino, prom-client, headers)',
    role: 'nest',
    paths: ['grpc'],
  },
  {
    id: 'nest-http',
    module: 'nest-http',
    label: 'NestJS (platform-express) + interceptor (pino, prom-client, headers)',
    role: 'nest',
    paths: ['gateway'],
  },
  {
    id: 'svc-none',
    module: 'svcboot',
    label: 'svcboot, no middleware',
    role: 'svc-none',
    paths: ['grpc', 'gateway'],
    env: { SVC_MIDDLEWARE: 'none' },
  },
  {
    id: 'svc-all',
    module: 'svcboot',
    label: 'svcboot, logging + prom + meta',
    role: 'svc-all',
    paths: ['grpc', 'gateway'],
    env: { SVC_MIDDLEWARE: 'logging,prom,meta' },
  },
  // The Connect row: svcboot with `connect.enabled` (its own processes, so that the rows above
  // measure the entry as it was), against connect-node serving the same RPC alone.
  {
    id: 'connect-node',
    module: 'connect-node',
    label: 'bare @connectrpc/connect-node (node:http2)',
    role: 'bare',
    paths: ['connect'],
  },
  {
    id: 'svc-none-connect',
    module: 'svcboot',
    label: 'svcboot, no middleware',
    role: 'svc-none',
    paths: ['connect'],
    env: { SVC_MIDDLEWARE: 'none', SVC_CONNECT: '1' },
  },
  {
    id: 'svc-all-connect',
    module: 'svcboot',
    label: 'svcboot, logging + prom + meta',
    role: 'svc-all',
    paths: ['connect'],
    env: { SVC_MIDDLEWARE: 'logging,prom,meta', SVC_CONNECT: '1' },
  },
];

export interface Comparison {
  /** Numerator and denominator roles: req/s ratio = a / b, CPU ratio = b's CPU / a's CPU. */
  a: Role;
  b: Role;
  /** The goal of issue #21, if any (a figure to compare, never asserted). */
  goal?: number;
}

export const COMPARISONS: readonly Comparison[] = [
  { a: 'svc-all', b: 'bare', goal: 0.95 },
  { a: 'svc-all', b: 'wired', goal: 1.5 },
  { a: 'svc-all', b: 'nest', goal: 1.5 },
  { a: 'svc-none', b: 'bare', goal: 1.2 },
  { a: 'svc-all', b: 'svc-none' },
  { a: 'bare', b: 'floor' },
  { a: 'svc-none', b: 'floor' },
];
