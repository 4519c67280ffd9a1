/** The default bound on how deeply request JSON may nest objects and arrays (as protobuf's own JSON parsers: 100). */
export const DEFAULT_MAX_JSON_DEPTH = 100;

/** Request JSON nested deeper than the gateway accepts (a 400, before any object is built). */
export class JsonDepthError extends Error {}

/**
 * Throws JsonDepthError when `text` opens more than `max` objects/arrays inside one another.
 * One pass over the characters, nothing allocated: brackets inside strings (with their `\`
 * escapes) do not count, and the text need not be valid JSON (JSON.parse judges that after).
 */
export function checkJsonDepth(text: string, max: number, what: string): void {
  let depth = 0;
  let inString = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash: the next character is escaped
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) {
        throw new JsonDepthError(
          `${what} nests objects and arrays more than ${max} deep (at character ${i}); flatten it, or raise gwOption.maxJsonDepth`,
        );
      }
    } else if (c === 125 || c === 93) depth--;
  }
}
