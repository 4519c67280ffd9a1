import { middlewareCatalogue } from './middleware-catalogue.js';

/**
 * What to say about `middleware.<key>` that no registered definition owns, or undefined when no
 * package is known to provide it (the usual "unknown key" message then applies). The package is
 * the installed one declaring the key (`svcboot.middlewareKeys`, findInstalledMiddlewares), else
 * svcboot's package declaring it (`middlewareCatalogue`, made from those same declarations).
 */
export function unknownMiddlewareMessage(
  key: string,
  installed: ReadonlyMap<string, { packageName: string }>,
): string | undefined {
  const found = installed.get(key)?.packageName;
  if (found)
    return `middleware "${key}" is provided by ${found}, which is installed but not registered: add \`import '${found}';\` to your app, or pass its definition in boot({ middlewares: [...] })`;
  const pkg = Object.hasOwn(middlewareCatalogue, key) ? middlewareCatalogue[key] : undefined;
  if (pkg)
    return `middleware "${key}" is provided by ${pkg}, which is not installed: run \`npm install ${pkg}\` and add \`import '${pkg}';\` to your app (or install and import @svcboot/all, every svcboot package)`;
  return undefined;
}
