import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { waitFor } from '@svcboot/testkit';

/** Node flags that run TypeScript sources of the workspace; tsx by URL, so any cwd works. */
export const SOURCE_NODE_ARGS = [
  '--conditions=svcboot-source',
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
];

/** True once something on 127.0.0.1:port answers /sw/swagger.json with 200. */
export async function servesSwagger(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/sw/swagger.json`).catch(() => undefined);
  await res?.body?.cancel();
  return res?.status === 200;
}

/** The text a running gRPC entry serves at /sw/swagger.json, once it answers. */
export function servedOpenApi(port: number, what: string): Promise<string> {
  return waitFor(
    `${what} to serve /sw/swagger.json`,
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/sw/swagger.json`);
      return res.status === 200 ? res.text() : undefined;
    },
    { timeoutMs: 30_000 },
  );
}
