/**
 * Stand-in for `createRequire(import.meta.url)` in entry-grpc's dist (protos.js, descriptors.js,
 * descriptor-set.js) inside a bundle, where no node_modules is reachable: the one module they
 * require (protobufjs/ext/descriptor) is bundled, and protobufjs's google/protobuf/*.proto files
 * are copied beside the bundle (servers/protobufjs/).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import descriptor from 'protobufjs/ext/descriptor/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeRequire = createRequire(import.meta.url);

function bundleRequire(id: string): unknown {
  if (id === 'protobufjs/ext/descriptor' || id === 'protobufjs/ext/descriptor/index.js')
    return descriptor;
  return nodeRequire(id);
}
bundleRequire.resolve = (id: string): string => {
  if (id === 'protobufjs/package.json') return path.join(here, 'protobufjs', 'package.json');
  return nodeRequire.resolve(id);
};

export { bundleRequire };
