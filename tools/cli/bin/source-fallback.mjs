// Registered by bin/svc.js when svc runs from a checkout's sources (`--conditions=svcboot-source`):
// a package whose `svcboot-source` target is missing (installed from a tarball or a registry,
// which ship dist/ only) resolves as it would without the condition. Without it, svc from a
// checkout could not load a project's installed @svcboot packages (`svc pb openapi`, `svc schema`).
import { register } from 'node:module';

register('./source-fallback-hooks.mjs', import.meta.url);
