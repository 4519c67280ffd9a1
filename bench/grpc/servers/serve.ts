/** What every peer server module shares: its port, the proto and the answer. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const demoDir = path.resolve(here, '../../../apps/demo-grpc');
export const protoFile = path.join(demoDir, 'api/v1/greeter.proto');
export const gwMappingFile = path.join(demoDir, 'api/v1/gw_mapping.yaml');

/** The port to listen on (PORT, set by run.ts). */
export function port(): number {
  const p = Number(process.env['PORT']);
  if (!Number.isInteger(p) || p <= 0)
    throw new Error('PORT is not set: the bench starts each server with PORT=<free port>');
  return p;
}

export const HELLO = { message: 'hello!' } as const;
export const HELLO_JSON = JSON.stringify(HELLO);
