import type { DescMessage, DescService, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { binaryDecoder } from './binary.js';
import { flatEncoder } from './flat-encoder.js';
import { messageEncoder } from './message-encoder.js';
import { protobufEs } from './protobuf-es.js';

/**
 * The grpc-js codec of a message type: protobuf-es messages, encoded by @bufbuild/protobuf's
 * toBinary (a flat message by flat-encoder.ts, another proto3 one by message-encoder.ts: the same
 * bytes), decoded by binary.ts (compiled
 * per type; fromBinary's result), once per call and direction.
 */
export function codecOf<Desc extends DescMessage>(
  desc: Desc,
): {
  serialize: (value: MessageInitShape<Desc>) => Buffer;
  deserialize: (bytes: Buffer) => MessageShape<Desc>;
} {
  const decode = binaryDecoder(desc);
  const encode = flatEncoder(desc) ?? messageEncoder(desc);
  const { create, isMessage, toBinary } = protobufEs();
  return {
    serialize: (value) => {
      if (encode !== undefined && value !== null && typeof value === 'object') {
        const bytes = encode(value as Record<string, unknown>);
        if (bytes !== undefined) return bytes;
      }
      const message = isMessage(value, desc)
        ? (value as MessageShape<Desc>)
        : create(desc, value as MessageInitShape<Desc>);
      const bytes = toBinary(desc, message);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    deserialize: (bytes) => decode(bytes) as MessageShape<Desc>,
  };
}

/** The grpc-js definition of a generated service: paths, streaming flags and protobuf-es codecs. */
export function definitionOf(service: DescService): ServiceDefinition {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methods) {
    const req = codecOf(m.input);
    const res = codecOf(m.output);
    definition[m.name] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === 'client_streaming' || m.methodKind === 'bidi_streaming',
      responseStream: m.methodKind === 'server_streaming' || m.methodKind === 'bidi_streaming',
      requestSerialize: req.serialize as (v: unknown) => Buffer,
      requestDeserialize: req.deserialize,
      responseSerialize: res.serialize as (v: unknown) => Buffer,
      responseDeserialize: res.deserialize,
      originalName: m.localName,
    };
  }
  return definition as ServiceDefinition;
}
