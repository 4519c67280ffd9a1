import { cacheError } from './errors.js';

/** Values are stored as JSON; one that JSON cannot carry is an error, not a silent loss. */
export function serialize(key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw cacheError('SVC_CACHE_NOT_SERIALIZABLE', [key, (err as Error).message], { cause: err });
  }
  if (text === undefined) {
    throw cacheError('SVC_CACHE_NOT_SERIALIZABLE', [
      key,
      `${typeof value} values have no JSON form`,
    ]);
  }
  return text;
}

export function deserialize<T>(text: string): T {
  return JSON.parse(text) as T;
}
