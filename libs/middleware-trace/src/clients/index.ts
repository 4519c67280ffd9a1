import type { TracerProvider } from '@opentelemetry/api';
import type { TracedClient } from '@svcboot/entry-core/toolkit';
import { instrumentIoredis } from './ioredis.js';
import { instrumentPg } from './pg.js';

/** entry-grpcclient and entry-httpclient start their client spans themselves, with the provider handed over. */
async function handOver(holder: unknown, provider: TracerProvider): Promise<void> {
  (holder as { setTracerProvider(p: TracerProvider): void }).setTracerProvider(provider);
}

/** The instrumentations this package has, by the driver a connector announces (registerTracedClient). */
const instrumentations: Record<
  string,
  (moduleExports: unknown, p: TracerProvider) => Promise<void>
> = {
  ioredis: instrumentIoredis,
  pg: instrumentPg,
  '@svcboot/entry-grpcclient': handOver,
  '@svcboot/entry-httpclient': handOver,
};

/** Patches an announced driver with its instrumentation; a driver this package has none for is left alone. */
export async function instrumentClient(
  client: TracedClient,
  provider: TracerProvider,
): Promise<void> {
  await instrumentations[client.driver]?.(client.moduleExports, provider);
}
