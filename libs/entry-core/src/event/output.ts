/**
 * A buffered, asynchronous write target: what loggers, event loggers and exporters write to
 * (outputs.ts makes them: a batched file or stream, or in a worker one forwarded to the primary).
 */
export interface Output {
  write(chunk: string): void;
}
