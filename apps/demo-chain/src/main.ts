// demo-chain: three services in one process (`npx nx serve demo-chain`): front (gRPC + REST
// gateway, PORT or 8101) calls users over gRPC (USERS_PORT or 8102) and billing over HTTP
// (BILLING_PORT or 8103). Each app boots its own boot.yaml; records and spans go to stdout.
// `node --import tsx src/main.ts users` runs one of them (a pod of the system, svc.system.yaml).
import path from 'node:path';
import { boot, type App } from '@svcboot/entry-core';
import '@svcboot/entry-grpc';
import '@svcboot/entry-grpcclient';
import '@svcboot/entry-http';
import '@svcboot/entry-httpclient';
import '@svcboot/middleware-trace';
import { appDir, serveBilling, serveFront, serveUsers } from './services.js';

const start = async (file: string, serve: (app: App) => void): Promise<App> => {
  // An absolute SVC_BOOT_CONFIG (the pod's /app/boot.yaml, svc dev's) stays as it is.
  const app = await boot({ configFile: path.resolve(appDir, file), cwd: appDir, argv: [] });
  serve(app);
  await app.bootstrap();
  return app;
};

const serves: Record<string, (app: App) => void> = {
  front: serveFront,
  users: serveUsers,
  billing: serveBilling,
};
const only = process.argv[2];
const env = process.env;

if (only !== undefined) {
  // One service (`node <main> front`, as in a pod of the system: svc.system.yaml): its boot.yaml
  // is SVC_BOOT_CONFIG (the pod's ConfigMap) or <service>.yaml; SIGINT stops it, SIGTERM drains
  // then stops it, SIGHUP reloads its boot.yaml (entry-core's waitForShutdown; `svc dev` sends it).
  const serve = serves[only];
  if (!serve) {
    process.stderr.write(
      `demo-chain: no service "${only}"; one of ${Object.keys(serves).join(', ')}\n`,
    );
    process.exit(2);
  }
  const app = await start(env.SVC_BOOT_CONFIG ?? `${only}.yaml`, serve);
  process.exit(await app.waitForShutdown());
} else {
  const users = await start('users.yaml', serveUsers);
  const billing = await start('billing.yaml', serveBilling);
  const front = await start('front.yaml', serveFront);
  process.stderr.write(
    `demo-chain ready: front on :${env.PORT ?? 8101} (gRPC and GET /v1/accounts/{id}), users on :${env.USERS_PORT ?? 8102}, billing on :${env.BILLING_PORT ?? 8103}\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // The front first (it drains its calls), then the services it calls.
    void front
      .shutdown(signal)
      .then(() => Promise.all([users.shutdown(signal), billing.shutdown(signal)]))
      .then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
