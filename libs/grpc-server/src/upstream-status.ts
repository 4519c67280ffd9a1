import { metadataClass, type Metadata } from '@svcboot/grpc-typed/internal/grpc-js';
import type { UpstreamFailure } from '@svcboot/entry-core/internal/call/upstream-failure';

/**
 * The status a call ends with when its handler let an outbound call's failure propagate and the
 * client does not pass its backend's text through: the failure's code and generic message, the
 * handler's own trailers, none of the backend's (its details, `grpc-status-details-bin`).
 */
export function upstreamStatus(
  failure: UpstreamFailure,
  trailers?: Metadata,
): { code: number; details: string; metadata: Metadata } {
  return {
    code: failure.grpcCode,
    details: failure.message,
    metadata: trailers?.clone() ?? new (metadataClass())(),
  };
}
