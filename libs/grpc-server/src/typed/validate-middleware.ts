import {
  createContextKey,
  isIgnored,
  type CallContext,
  type CallMiddleware,
  type ContextKey,
  type MiddlewareDefinition,
} from '@svcboot/entry-core';
import { described, z } from '@svcboot/entry-core/internal/zod';
import { GRPC_ENTRY_TYPE } from '../entry-type.js';
import { nonEmptyTextSchema, offSchema } from '@svcboot/entry-core/internal/schema';

/** `middleware.validate`: protovalidate's check of typed services' requests. */
export const validateSchema = described(
  z.strictObject({
    enabled: offSchema,
    /** Calls left unchecked: an operation (`/pkg.Svc/Method`), a path, a prefix ending in `/`, a glob. */
    ignore: z.array(nonEmptyTextSchema).default([]),
  }),
  "Request validation of typed services from the protos' buf.validate rules (protovalidate): INVALID_ARGUMENT with a google.rpc.BadRequest (gateway: 400), before the handler; grpc entries only",
);

/** The options of `middleware.validate`, defaults applied. */
export type ValidateConfig = z.output<typeof validateSchema>;

/**
 * Set on a call the validate middleware lets the check run on (not ignored). The chain runs before
 * the request is decoded, so the middleware only marks the call; the typed adapter, which holds
 * the decoded message, checks it when the mark is there. @internal
 */
export const VALIDATE_REQUEST: ContextKey<boolean> = createContextKey<boolean>(
  'svcboot.grpc.validate',
  false,
);

/** The mark the middleware leaves on calls not on its `ignore` list. */
class ValidateMiddleware implements CallMiddleware {
  constructor(private readonly ignore: readonly string[]) {}

  before(call: CallContext): void {
    if (this.ignore.length === 0 || !isIgnored(this.ignore, call)) call.set(VALIDATE_REQUEST, true);
  }
}

/**
 * `middleware.validate` (registered when @svcboot/entry-grpc is imported): each request message
 * of a typed service, each message of a request stream too, is checked against its
 * `buf.validate` rules (@bufbuild/protovalidate, an optional peer dependency the entry loads at
 * bootstrap) on gRPC, gateway and gRPC-Web calls. It runs last in the chain: a call a guard
 * refuses is never checked.
 */
export const validateDefinition: MiddlewareDefinition<ValidateConfig> = {
  key: 'validate',
  // Last: a refused call is never decoded and checked.
  phase: 'handler',
  schema: validateSchema,
  create(config, _ctx, entry) {
    if (entry.entryType !== GRPC_ENTRY_TYPE)
      throw new Error(
        `${entry.configPath}: validate checks the requests of typed gRPC services; a ${entry.entryType} has none: remove it here and enable it on the grpc entry`,
      );
    return new ValidateMiddleware(config.ignore);
  },
};
