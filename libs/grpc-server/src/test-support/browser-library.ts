import { boot, type App } from '@svcboot/entry-core';
import { grpcEntry } from '../index.js';
import { libraryClient, type Harness } from './harness.js';
import {
  libraryDefinition,
  libraryImplementation,
  libraryProto,
  protoDir,
} from './library-service.js';

/**
 * The test Library on a grpc entry (port 0, grpc-gateway's default header style) with `middleware`
 * lines (6 spaces in) from boot.yaml text; `handled` lists the handler calls it saw.
 */
export async function startBrowserLibrary(
  middlewareYaml: string,
  options: {
    env?: Record<string, string>;
    extraYaml?: string;
    handled?: string[];
    /** generateUnboundMethods (default true). */
    unbound?: boolean;
  } = {},
): Promise<{ app: App; base: string; client: Harness['client'] }> {
  const app = await boot({
    argv: [],
    env: options.env ?? {},
    configText: [
      'app: { name: library, version: 1.0.0 }',
      'logger:',
      '  - name: quiet',
      '    level: error',
      'event:',
      '  - name: none',
      '    outputPaths: ["/dev/null"]',
      'grpc:',
      '  - name: lib',
      '    port: 0',
      '    loggerEntry: quiet',
      '    eventEntry: none',
      `    generateUnboundMethods: ${options.unbound ?? true}`,
      '    protos:',
      `      files: ["${libraryProto}"]`,
      `      includeDirs: ["${protoDir}"]`,
      options.extraYaml ?? '',
      '    middleware:',
      '      meta: { enabled: true }',
      middlewareYaml,
    ].join('\n'),
  });
  const entry = grpcEntry(app, 'lib');
  const handled = options.handled;
  const seen =
    (name: string, f: (call: never, cb: never) => void) =>
    (call: { request: Record<string, unknown> }, cb: unknown) => {
      handled?.push(`${name} ${JSON.stringify(call.request)}`);
      f(call as never, cb as never);
    };
  entry.addService(libraryDefinition(), {
    ...libraryImplementation,
    GetShelf: seen('GetShelf', libraryImplementation.GetShelf as never),
    CreateBook: seen('CreateBook', libraryImplementation.CreateBook as never),
    Archive: seen('Archive', libraryImplementation.Archive as never),
    Ping: seen('Ping', libraryImplementation.Ping as never),
  } as typeof libraryImplementation);
  await app.bootstrap();
  const client = libraryClient(`127.0.0.1:${entry.port}`);
  const close = app.shutdown.bind(app);
  app.shutdown = (...args: Parameters<App['shutdown']>) => {
    client.close();
    return close(...args);
  };
  return { app, base: `http://127.0.0.1:${entry.port}`, client };
}
