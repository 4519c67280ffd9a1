/**
 * An object made on first use: a stand-in that creates the object when any of its properties is
 * first read (or listed, set, tested with `in`) and from then on answers as the object does.
 * What a package exports as a value is evaluated with the package, so values whose making loads
 * large modules (protobuf-es descriptors) are exported as these; the stand-in is not `===` the
 * object it forwards to, everything else about it is the object's (util.inspect included:
 * Node's inspect formats a proxy's target, not through the traps, so the target answers
 * `util.inspect.custom` with the object's own rendering).
 */
export function lazyObject<T extends object>(create: () => T): T {
  let made: T | undefined;
  const real = (): T => {
    made ??= create();
    return made;
  };
  const target = {};
  Object.defineProperty(target, Symbol.for('nodejs.util.inspect.custom'), {
    configurable: true,
    value: (
      _depth: number,
      options: object,
      inspect: (value: unknown, options: object) => string,
    ) => inspect(real(), options),
  });
  return new Proxy(target as T, {
    get: (_, key) => Reflect.get(real(), key),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const found = Reflect.getOwnPropertyDescriptor(real(), key);
      // A proxy may only report a property the stand-in lacks as configurable.
      return found === undefined ? undefined : { ...found, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    set: (_, key, value) => Reflect.set(real(), key, value),
    defineProperty: (_, key, attributes) => Reflect.defineProperty(real(), key, attributes),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
  });
}
