/**
 * svcboot's own middleware packages, by the key each makes configurable under `middleware:`.
 * Only for the message when boot.yaml turns on a middleware no imported package registered and
 * no installed package declares (`"svcboot": { "middlewareKeys": [...] }` in its package.json,
 * found by findInstalledMiddlewares): then the package to install can still be named. A
 * middleware of another publisher is found from what is installed only.
 */
export const SVCBOOT_MIDDLEWARE_PACKAGES: Readonly<Record<string, string>> = {
  trace: '@svcboot/middleware-trace',
  jwt: '@svcboot/middleware-jwt',
};

/**
 * What to say about `middleware.<key>` that no registered definition owns, or undefined when no
 * package is known to provide it (the usual "unknown key" message then applies).
 */
export function unknownMiddlewareMessage(
  key: string,
  installed: ReadonlyMap<string, { packageName: string }>,
): string | undefined {
  const found = installed.get(key)?.packageName;
  if (found)
    return `middleware "${key}" is provided by ${found}, which is installed but not registered: add \`import '${found}';\` to your app, or pass its definition in boot({ middlewares: [...] })`;
  const pkg = SVCBOOT_MIDDLEWARE_PACKAGES[key];
  if (pkg)
    return `middleware "${key}" is provided by ${pkg}, which is not installed: run \`npm install ${pkg}\` and add \`import '${pkg}';\` to your app (or install and import @svcboot/all, every svcboot package)`;
  return undefined;
}
