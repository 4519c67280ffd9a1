// Copies the googleapis protos this demo needs from the google-proto-files npm package into
// third-party/googleapis (buf's second root). Run with `npm run protos`; the result is committed.
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FILES = [
  'google/api/annotations.proto',
  'google/api/http.proto',
  'google/api/httpbody.proto',
  'google/rpc/code.proto',
  'google/rpc/error_details.proto',
  'google/rpc/status.proto',
];

const require = createRequire(import.meta.url);
const source = path.dirname(require.resolve('google-proto-files/package.json'));
const target = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'third-party',
  'googleapis',
);

for (const file of FILES) {
  const to = path.join(target, file);
  await mkdir(path.dirname(to), { recursive: true });
  await copyFile(path.join(source, file), to);
  console.log(`${file} <- google-proto-files`);
}
