import type { MiddlewareDefinition } from '../definition.js';
import { TimeoutMiddleware } from './middleware.js';
import { timeoutSchema, type TimeoutConfig } from './schema.js';

/**
 * `middleware.timeout`: a deadline per call, the smaller of `timeoutMs` (or its `paths` item) and
 * the client's; DeadlineExceeded / 504 at it (entry-core README, "Timeout").
 */
export const timeoutDefinition: MiddlewareDefinition<TimeoutConfig> = {
  key: 'timeout',
  phase: 'deadline',
  schema: timeoutSchema,
  create: (config) => new TimeoutMiddleware(config),
};

export { TimeoutMiddleware } from './middleware.js';
export { timeoutSchema, type TimeoutConfig } from './schema.js';
