// npm run -s call -w apps/demo-secure: Hello without a token, Hello with $TOKEN (when set) and Ping,
// over gRPC with grpc-js to localhost:$PORT (8090): what grpcurl would show, for machines without it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, Metadata, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

type Unary = (
  request: object,
  md: Metadata,
  cb: (error: ServiceError | null, response: object) => void,
) => void;
type GreeterClient = { Hello: Unary; Ping: Unary; close(): void };

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = loadPackageDefinition(
  loadSync(path.join(appDir, 'api/v1/greeter.proto'), { includeDirs: [path.join(appDir, 'api')] }),
) as unknown as {
  api: { v1: { Greeter: new (a: string, c: unknown) => GreeterClient } };
};
const client = new pkg.api.v1.Greeter(
  `localhost:${process.env['PORT'] ?? '8090'}`,
  credentials.createInsecure(),
);

function call(method: 'Hello' | 'Ping', md: Metadata): Promise<object> {
  return new Promise((resolve) => {
    client[method]({}, md, (error, response) =>
      resolve(
        error
          ? {
              code: error.code,
              details: error.details,
              wwwAuthenticate: error.metadata.get('www-authenticate'),
              traceId: error.metadata.get('x-trace-id'),
            }
          : response,
      ),
    );
  });
}

console.log('Hello, no metadata:', await call('Hello', new Metadata()));
const token = process.env['TOKEN'];
if (token) {
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  console.log('Hello, Bearer $TOKEN:', await call('Hello', md));
}
console.log('Ping, no metadata:', await call('Ping', new Metadata()));
client.close();
