/** bench/grpc/servers/grpc-js-wired.ts under node:cluster with WORKERS workers (cluster.ts). */
import { clustered } from './cluster.js';

await clustered(() => import('../../grpc/servers/grpc-js-wired.js'));
