import type { TracerProvider } from '@opentelemetry/api';
import type { TracedClient } from '@svcboot/entry-core';
import { instrumentIoredis } from './ioredis.js';
import { instrumentPg } from './pg.js';

/** The instrumentations this package has, by the driver a connector announces (registerTracedClient). */
const instrumentations: Record<
  string,
  (moduleExports: unknown, p: TracerProvider) => Promise<void>
> = {
  ioredis: instrumentIoredis,
  pg: instrumentPg,
  // entry-grpcclient starts its client spans itself, with the provider it is handed.
  '@svcboot/entry-grpcclient': async (holder, provider) => {
    (holder as { setTracerProvider(p: TracerProvider): void }).setTracerProvider(provider);
  },
};

/** Patches an announced driver with its instrumentation; a driver this package has none for is left alone. */
export async function instrumentClient(
  client: TracedClient,
  provider: TracerProvider,
): Promise<void> {
  await instrumentations[client.driver]?.(client.moduleExports, provider);
}
