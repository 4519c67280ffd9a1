import { pino, type Logger, type LevelWithSilent } from 'pino';
import { isoWithOffset } from './time.js';
import type { Output } from './event/output.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogEncoding = 'console' | 'json';

export interface AppLoggerOptions {
  level: LogLevel;
  encoding: LogEncoding;
  outputs: readonly Output[];
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** pino writes JSON lines; the console encoding re-lays each one as `time LEVEL [entry] message {fields}`. */
function consoleLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, msg, entryName, ...rest } = rec;
  const when = typeof time === 'number' ? isoWithOffset(time) : String(time);
  const who = typeof entryName === 'string' ? `\t${entryName}` : '';
  const extra = Object.keys(rest).length ? `\t${JSON.stringify(rest)}` : '';
  return `${when}\t${LEVEL_NAMES[level as number] ?? String(level)}${who}\t${String(msg ?? '')}${extra}\n`;
}

/**
 * Fields an app log line gets from the context it is written in: the trace middleware sets it
 * (the active span's `traceId` and `spanId`), once per process. Returns a new object, or
 * undefined when there is nothing to add.
 */
export type LogCorrelation = () => Record<string, string> | undefined;
let correlation: LogCorrelation | undefined;

/** Sets what every app logger adds to the lines written during a call (see LogCorrelation). */
export function setLogCorrelation(fn: LogCorrelation): void {
  correlation = fn;
}

const NO_FIELDS: Record<string, string> = Object.freeze({}) as Record<string, string>;
function correlationFields(): Record<string, string> {
  return correlation === undefined ? NO_FIELDS : (correlation() ?? NO_FIELDS);
}
/** pino's default merge writes into the mixin's object: the shared empty one is never written to. */
function mergeCorrelation(merge: object, fields: object): object {
  return fields === NO_FIELDS ? merge : Object.assign(fields, merge);
}

/** An app logger (pino) writing to the given outputs in `console` or `json` encoding. */
export function createAppLogger(options: AppLoggerOptions): Logger {
  const stream = {
    write(line: string): void {
      const text = options.encoding === 'console' ? consoleLine(line) : line;
      for (const out of options.outputs) out.write(text);
    },
  };
  return pino(
    {
      level: options.level as LevelWithSilent,
      base: undefined,
      mixin: correlationFields,
      mixinMergeStrategy: mergeCorrelation,
      timestamp:
        options.encoding === 'json'
          ? () => `,"time":"${isoWithOffset(Date.now())}"`
          : pino.stdTimeFunctions.epochTime,
      formatters: {
        level: (label: string) => ({
          level: options.encoding === 'json' ? label : pino.levels.values[label],
        }),
      },
    },
    stream,
  );
}
