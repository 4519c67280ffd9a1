import {
  errorBody,
  googleStatusName,
  type ErrorModel,
} from '@svcboot/entry-core/internal/middleware/error-model';
import { codeName } from './codes.js';

export type GatewayErrorModel = 'grpcGateway' | ErrorModel;

/** An error's body in `model`: grpc-gateway's `{code, message, details}` or an entry-core model. */
export function gatewayErrorBody(
  model: GatewayErrorModel,
  status: { code: number; message: string; details: unknown[] },
  httpStatus: number,
  requestId: () => string,
): unknown {
  if (model === 'grpcGateway') return status;
  return errorBody(model, {
    httpStatus,
    grpcStatus: googleStatusName(codeName(status.code)),
    message: status.message,
    requestId: requestId(),
    details: status.details,
  });
}
