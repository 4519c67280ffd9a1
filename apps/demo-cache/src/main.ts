import '@svcboot/entry-cache';
import '@svcboot/entry-http';
import { runApp } from '@svcboot/entry-core';
import { registerRoutes } from './routes.js';

// curl 'localhost:8080/v1/set?value=hello' && curl localhost:8080/v1/get
await runApp((app) => registerRoutes(app));
