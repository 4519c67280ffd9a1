import { createRequire } from 'node:module';
import type { ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);

interface DescriptorModule {
  FileDescriptorProto: { decode(b: Uint8Array): protobuf.Message };
  FileDescriptorSet: { create(o: { file: protobuf.Message[] }): protobuf.Message };
}

interface WithDescriptors {
  requestType?: { fileDescriptorProtos?: Buffer[] };
}

/** The serialized FileDescriptorProtos @grpc/proto-loader puts on each method, if any. */
export function descriptorsOf(definition: ServiceDefinition): Buffer[] {
  const out: Buffer[] = [];
  for (const m of Object.values(definition) as WithDescriptors[])
    out.push(...(m.requestType?.fileDescriptorProtos ?? []));
  return out;
}

/** A protobufjs root rebuilt from proto-loader definitions, for services not found in `protos`. */
export function rootFromDefinitions(
  definitions: readonly ServiceDefinition[],
): protobuf.Root | undefined {
  const seen = new Set<string>();
  const buffers: Buffer[] = [];
  for (const d of definitions) {
    for (const b of descriptorsOf(d)) {
      const key = b.toString('base64');
      if (!seen.has(key)) {
        seen.add(key);
        buffers.push(b);
      }
    }
  }
  if (buffers.length === 0) return undefined;
  // ext/descriptor extends protobufjs's Root with fromDescriptor when loaded.
  const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule;
  const set = descriptor.FileDescriptorSet.create({
    file: buffers.map((b) => descriptor.FileDescriptorProto.decode(b)),
  });
  const root = (
    protobuf.Root as unknown as { fromDescriptor(s: protobuf.Message): protobuf.Root }
  ).fromDescriptor(set);
  root.resolveAll();
  return root;
}
