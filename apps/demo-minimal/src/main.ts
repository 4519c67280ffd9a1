import { runApp } from '@svcboot/entry-core';

// Boots ./boot.yaml, writes a Bootstrap record per entry, and waits for Ctrl-C (SIGINT) or SIGTERM.
await runApp((app) => {
  app.logger.info(`${app.info.name} ${app.info.version} is booting; press Ctrl-C to stop`);
});
