import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { kvEntry } from '@svcboot/entry-kv';
import { registerKvRoutes, ttlFromEnv } from './routes.js';

// Boots ./boot.yaml: the kvstore entry connects and pings Redis, then the HTTP entry serves
// GET /v1/get and POST /v1/set (ARCHITECTURE.md §7).
await runApp((app) => {
  registerKvRoutes(httpEntry(app, 'kv-api').router, kvEntry(app, 'redis').client, {
    ttlMs: ttlFromEnv(process.env),
  });
});
