import { isoWithOffset } from '../time.js';
import type { Event } from './event.js';

export type EventEncoding = 'console' | 'json';

/** The parts of a record that are the same for every record of one entry; encoded once. */
export interface EventScope {
  readonly timezone: string;
  readonly app: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string>>;
  readonly appJson: string;
  readonly envJson: string;
}

export function makeScope(timezone: string, app: Record<string, string>, env: Record<string, string>): EventScope {
  return { timezone, app, env, appJson: JSON.stringify(app), envJson: JSON.stringify(env) };
}

export const SEPARATOR = '-'.repeat(72);

/** The order of keys in a record, SPEC.md 2.10 (`error` only when there is one). */
export const RECORD_KEYS = [
  'endTime',
  'startTime',
  'elapsedNano',
  'timezone',
  'ids',
  'app',
  'env',
  'payloads',
  'error',
  'counters',
  'pairs',
  'timing',
  'remoteAddr',
  'operation',
  'resCode',
  'eventStatus',
] as const;

// A value must stay on its line: a CR or LF in it would end the key early.
const oneLine = (s: string): string => (s.includes('\n') || s.includes('\r') ? s.replace(/\r/g, '\\r').replace(/\n/g, '\\n') : s);

function idsOf(e: Event): Record<string, string> {
  return e.requestId ? { eventId: e.eventId, requestId: e.requestId } : { eventId: e.eventId };
}

export function encodeConsole(e: Event, scope: EventScope): string {
  let out =
    `${SEPARATOR}\nendTime=${isoWithOffset(e.endMs)}\nstartTime=${isoWithOffset(e.startMs)}\n` +
    `elapsedNano=${e.elapsedNano}\ntimezone=${scope.timezone}\nids=${JSON.stringify(idsOf(e))}\n` +
    `app=${scope.appJson}\nenv=${scope.envJson}\npayloads=${JSON.stringify(e.payloads ?? {})}\n`;
  if (e.error !== undefined) out += `error=${oneLine(e.error)}\n`;
  out +=
    `counters=${JSON.stringify(e.counters ?? {})}\npairs=${JSON.stringify(e.pairs ?? {})}\n` +
    `timing=${JSON.stringify(e.timing ?? {})}\nremoteAddr=${oneLine(e.remoteAddr)}\n` +
    `operation=${oneLine(e.operation)}\nresCode=${oneLine(e.resCode)}\neventStatus=${e.eventStatus}\nEOE\n`;
  return out;
}

export function encodeJson(e: Event, scope: EventScope): string {
  // Built as text: the app and env parts are encoded once per entry, not once per record.
  let out =
    `{"endTime":"${isoWithOffset(e.endMs)}","startTime":"${isoWithOffset(e.startMs)}","elapsedNano":${e.elapsedNano}` +
    `,"timezone":${JSON.stringify(scope.timezone)},"ids":${JSON.stringify(idsOf(e))},"app":${scope.appJson},"env":${scope.envJson}` +
    `,"payloads":${JSON.stringify(e.payloads ?? {})}`;
  if (e.error !== undefined) out += `,"error":${JSON.stringify(e.error)}`;
  out +=
    `,"counters":${JSON.stringify(e.counters ?? {})},"pairs":${JSON.stringify(e.pairs ?? {})},"timing":${JSON.stringify(e.timing ?? {})}` +
    `,"remoteAddr":${JSON.stringify(e.remoteAddr)},"operation":${JSON.stringify(e.operation)},"resCode":${JSON.stringify(e.resCode)}` +
    `,"eventStatus":"${e.eventStatus}"}\n`;
  return out;
}

/** Reads a console record back into its keys, in order (for tests and log tooling). */
export function parseConsoleRecord(text: string): Array<[string, string]> {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines[0] !== SEPARATOR) throw new Error('a console record starts with a line of 72 dashes');
  if (lines[lines.length - 1] !== 'EOE') throw new Error('a console record ends with EOE');
  return lines.slice(1, -1).map((line) => {
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`not a key=value line: ${line}`);
    return [line.slice(0, eq), line.slice(eq + 1)];
  });
}
