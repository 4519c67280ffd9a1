import type { MethodDefinition } from '@grpc/grpc-js';

/**
 * Whether a method definition's codec functions are @grpc/proto-loader's own, recognised by their
 * source text (proto-loader 0.8's build/src/index.js). The gateway takes two shortcuts that hold
 * only for proto-loader's functions (issue #41): the empty request copied instead of decoded
 * (empty-request.ts) and the response taken from `fromObject` without the binary round trip
 * (response-fast.ts). Any other function (a typed service's codec, a wrapper around
 * proto-loader's, a bound function, another version's text) is not recognised, and the gateway
 * then calls it as it is.
 */

/** proto-loader's `createSerializer`: `cls.encode(cls.fromObject(arg)).finish()` after its array check. */
const SERIALIZER = /cls\.fromObject\(arg\)[\s\S]*cls\.encode\(message\)\.finish\(\)/;

/** proto-loader's `createDeserializer`, whole: `cls.toObject(cls.decode(argBuf), options)`. */
const DESERIALIZER =
  /^function deserialize\(argBuf\) \{\s*return cls\.toObject\(cls\.decode\(argBuf\), options\);\s*\}$/;

const sourceOf = (fn: unknown): string => Function.prototype.toString.call(fn);

/**
 * Whether `def`'s responseSerialize is proto-loader's serializer (fromObject, then encode) and its
 * responseType proto-loader's descriptor of a message.
 */
export function hasProtoLoaderResponseSerializer(def: MethodDefinition<unknown, unknown>): boolean {
  const format = (def as { responseType?: { format?: unknown } }).responseType?.format;
  if (format !== 'Protocol Buffer 3 DescriptorProto') return false;
  return SERIALIZER.test(sourceOf(def.responseSerialize));
}

/** Whether `def`'s requestDeserialize is proto-loader's deserializer (decode, then toObject). */
export function hasProtoLoaderRequestDeserializer(
  def: MethodDefinition<unknown, unknown>,
): boolean {
  return DESERIALIZER.test(sourceOf(def.requestDeserialize));
}
