import type { DescMessage, Message } from '@bufbuild/protobuf';
import type { Path } from '@bufbuild/protobuf/reflect';
import { BadRequestSchema, Code, RpcError, detail } from '@svcboot/grpc-typed';

/** The part of @bufbuild/protovalidate's Validator this uses. */
interface Validator {
  validate(
    schema: DescMessage,
    message: Message,
  ):
    | { kind: 'valid' }
    | { kind: 'invalid'; violations: Array<{ message: string; ruleId: string; field: Path }> }
    | { kind: 'error'; error: Error };
}

/** Checks a request message; throws the RpcError the call ends with. */
export type RequestCheck = (schema: DescMessage, message: Message) => void;

/**
 * A field path in JSON names, as the gateway's clients write fields (`book.tags[0]`,
 * `labels["k"]`); the BadRequest detail carries it on gRPC and on the gateway alike.
 */
export function jsonPath(path: Path): string {
  let out = '';
  for (const item of path) {
    switch (item.kind) {
      case 'field':
      case 'oneof':
        out += `${out ? '.' : ''}${item.kind === 'field' ? item.jsonName : item.name}`;
        break;
      case 'extension':
        out += `${out ? '.' : ''}[${item.typeName}]`;
        break;
      case 'list_sub':
        out += `[${item.index}]`;
        break;
      case 'map_sub':
        out += `[${JSON.stringify(String(item.key))}]`;
        break;
    }
  }
  return out;
}

/**
 * The request check of `middleware.validate` (see validate-middleware.ts): the `buf.validate` rules of the request
 * message (protovalidate, @bufbuild/protovalidate, an optional peer dependency loaded here).
 * A message that breaks them ends the call with INVALID_ARGUMENT and a google.rpc.BadRequest
 * naming each field (JSON names) and what is wrong; the handler is not called. A rule that
 * cannot be evaluated is INTERNAL, its text only in the log.
 */
export async function protovalidateCheck(onError: (err: Error) => void): Promise<RequestCheck> {
  let mod: { createValidator(): Validator };
  try {
    mod = (await import('@bufbuild/protovalidate')) as unknown as {
      createValidator(): Validator;
    };
  } catch (err) {
    throw new Error(
      `middleware.validate is enabled but @bufbuild/protovalidate cannot be loaded (${(err as Error).message}); npm install @bufbuild/protovalidate`,
      { cause: err },
    );
  }
  const validator = mod.createValidator();
  return (schema, message) => {
    const r = validator.validate(schema, message);
    if (r.kind === 'valid') return;
    if (r.kind === 'error') {
      onError(r.error);
      throw new RpcError(Code.INTERNAL, 'the request could not be validated');
    }
    const fieldViolations = r.violations.map((v) => ({
      field: jsonPath(v.field),
      description: v.message,
      reason: v.ruleId,
    }));
    const first = fieldViolations[0]!;
    throw new RpcError(
      Code.INVALID_ARGUMENT,
      `invalid request: ${first.field}: ${first.description}${fieldViolations.length > 1 ? ` (and ${fieldViolations.length - 1} more)` : ''}`,
      [detail(BadRequestSchema, { fieldViolations })],
    );
  };
}
