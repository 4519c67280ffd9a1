/** bench/grpc/servers/koa-wired.ts under node:cluster with WORKERS workers (cluster.ts). */
import { clustered } from './cluster.js';

await clustered(() => import('../../grpc/servers/koa-wired.js'));
