// The resolve hook of record-modules.mjs (it runs on the loader's thread): posts each resolved URL.
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}
