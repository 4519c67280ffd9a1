import { runApp } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';
import { columnarEntry } from '@svcboot/entry-columnar';
import { registerUserRoutes } from './routes.js';
import { UserStore } from './users.js';

// Boots ./boot.yaml: the columnardb entry connects (creating the database when missing), the user
// table is created, then the HTTP entry serves the five user routes (ARCHITECTURE.md §7).
await runApp((app) => {
  const columnar = columnarEntry(app, 'clickhouse');
  const [dbName] = columnar.databases;
  if (dbName === undefined)
    throw new Error('columnardb[clickhouse] lists no database; the demo needs one');
  const db = columnar.db(dbName);
  const store = new UserStore(db);
  // Connectors bootstrap before servers, so the table exists before the first request.
  columnar.afterConnect(async () => {
    if (!db.dryRun) await store.migrate();
  });
  registerUserRoutes(httpEntry(app, 'user-api').router, store);
});
