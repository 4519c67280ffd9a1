// entry-kv's own test helpers (backend harnesses live in @svcboot/testkit): not exported.
export * from './boot-with-logs.js';
