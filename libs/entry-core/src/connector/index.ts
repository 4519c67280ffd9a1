export { parseHostPort, hostPortSchema, type HostPort, type HostPortOptions } from './address.js';
export { parseParams, type ConnectorParam } from './params.js';
export {
  databaseItemSchema,
  databaseListSchema,
  type DatabaseSchemaOptions,
} from './database-schema.js';
export { StatementLogger, type Statement } from './statement-logger.js';
