// The resolve hook of source-fallback.mjs (module.register runs it off the main thread).
const SOURCE = 'svcboot-source';

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !context.conditions.includes(SOURCE)) throw err;
    return nextResolve(specifier, {
      ...context,
      conditions: context.conditions.filter((c) => c !== SOURCE),
    });
  }
}
