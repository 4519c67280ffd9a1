import '@svcboot/entry-http';
import '@svcboot/entry-sql';
import { runApp } from '@svcboot/entry-core';
import { registerRoutes } from './routes.js';

// PostgreSQL at $PG_ADDR (default localhost:5432); the database is created and migrated at boot.
await runApp((app) => registerRoutes(app));
