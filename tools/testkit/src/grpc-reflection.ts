import { createRequire } from 'node:module';
import path from 'node:path';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

type ReflectionClient = Record<string, (...a: unknown[]) => unknown> & { close(): void };

/** The services a gRPC server lists through reflection (grpc.reflection.v1), as a command-line client sees them. */
export async function listServicesByReflection(address: string): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const proto = path.join(
    path.dirname(require.resolve('@grpc/reflection/package.json')),
    'build/proto/grpc/reflection/v1/reflection.proto',
  );
  const pkg = loadPackageDefinition(loadSync(proto, { keepCase: true })) as unknown as {
    grpc: {
      reflection: {
        v1: { ServerReflection: new (a: string, c: unknown, o: unknown) => ReflectionClient };
      };
    };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(
    address,
    credentials.createInsecure(),
    { 'grpc.use_local_subchannel_pool': 1 },
  );
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const s = client['ServerReflectionInfo']!() as NodeJS.ReadWriteStream;
      s.on('data', (m: { list_services_response?: { service: Array<{ name: string }> } }) => {
        resolve(m.list_services_response?.service.map((x) => x.name) ?? []);
        s.end();
      });
      s.on('error', reject);
      s.write({ list_services: '' } as never);
    });
  } finally {
    client.close();
  }
}
