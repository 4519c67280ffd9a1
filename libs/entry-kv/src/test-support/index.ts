// Test helpers, shared with packages that build on entry-kv (entry-cache): not part of the published API.
export * from './redis-servers.js';
export * from './boot-with-logs.js';
