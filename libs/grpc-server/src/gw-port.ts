import type { OnePortListener } from './one-port.js';

/**
 * rk-grpc's `gwPort`, kept by the rk-boot porting mode only (porting.ts; SPEC.md's one port is the
 * rule otherwise): a second port of the same listener, where the entry serves what it serves on
 * `port` (the gateway, the UIs, the built-in routes, gRPC too: connections are told apart the
 * same way), through the same chain, counted against the same maxConnections and drained with
 * it. undefined when there is none (no gwPort, or the same as port).
 */
export function secondPortOf(config: {
  port: number;
  gwPort?: number | undefined;
}): number | undefined {
  const { port, gwPort } = config;
  return gwPort === undefined || gwPort === 0 || gwPort === port ? undefined : gwPort;
}

/** Listens on the second port as well; resolves to the port listened on. */
export function listenSecondPort(listener: OnePortListener, gwPort: number): Promise<number> {
  return listener.listenAlso(gwPort);
}
