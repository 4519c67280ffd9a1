/** An OpenAPI schema object as the generator builds it (v2 and v3 alike). */
export type Schema = Record<string, unknown>;
