/** Values are stored as JSON; one that JSON cannot carry is an error, not a silent loss. */
export function serialize(key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new Error(`cannot cache the value of "${key}": ${(err as Error).message}`);
  }
  if (text === undefined) {
    throw new Error(`cannot cache the value of "${key}": ${typeof value} values have no JSON form`);
  }
  return text;
}

export function deserialize<T>(text: string): T {
  return JSON.parse(text) as T;
}
