/** The `type` of every grpc entry (records' `entryType`), apart so that modules the entry imports can name it. */
export const GRPC_ENTRY_TYPE = 'GrpcEntry';
