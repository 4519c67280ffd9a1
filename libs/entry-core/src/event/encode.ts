import { isoWithOffset } from '../time.js';
import type { Event } from './event.js';
import { jsonMembers, jsonObject, quote } from './json.js';

export type EventEncoding = 'console' | 'json';

/** The parts of a record that are the same for every record of one entry; encoded once. */
export interface EventScope {
  readonly timezone: string;
  readonly app: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string>>;
  readonly appJson: string;
  readonly envJson: string;
  /** The console lines from timezone to `ids=`, and from app to `payloads=`, as text. */
  readonly consoleTimezone: string;
  readonly consoleAppEnv: string;
}

export function makeScope(
  timezone: string,
  app: Record<string, string>,
  env: Record<string, string>,
): EventScope {
  const appJson = JSON.stringify(app);
  const envJson = JSON.stringify(env);
  return {
    timezone,
    app,
    env,
    appJson,
    envJson,
    consoleTimezone: `\ntimezone=${timezone}\nids=`,
    consoleAppEnv: `\napp=${appJson}\nenv=${envJson}\npayloads=`,
  };
}

export const SEPARATOR = '-'.repeat(72);

/** The order of keys in a record, ARCHITECTURE.md §5.1 (`error` only when there is one). */
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
const oneLine = (s: string): string =>
  s.includes('\n') || s.includes('\r') ? s.replace(/\r/g, '\\r').replace(/\n/g, '\\n') : s;

function idsJson(e: Event): string {
  const eventId = quote(e.eventId);
  // An API call's two ids are one (SPEC.md §2.10): quoted once.
  const requestId = e.requestId === e.eventId ? eventId : quote(e.requestId);
  if (e.traceId !== '')
    return `{"eventId":${eventId},"requestId":${requestId},"traceId":"${e.traceId}","spanId":"${e.spanId}"}`;
  return e.requestId ? `{"eventId":${eventId},"requestId":${requestId}}` : `{"eventId":${eventId}}`;
}

/** The last payloads' members and their object (`{…}`), kept: records in a row mostly share them. */
let lastPre: string | undefined;
let lastPreObject = '{}';

function payloadsJson(e: Event): string {
  const pre = e.payloadsJson;
  if (pre === undefined) return jsonObject(e.payloads);
  const more = e.payloads === undefined ? '' : jsonMembers(e.payloads);
  if (more !== '') return pre === '' ? `{${more}}` : `{${pre},${more}}`;
  if (pre !== lastPre) {
    lastPreObject = `{${pre}}`;
    void Number(lastPreObject); // flat once (see isoWithOffset)
    lastPre = pre;
  }
  return lastPreObject;
}

const CONSOLE_START = `${SEPARATOR}\nendTime=`;
/** From `counters=` to `remoteAddr=` when a record has no counters, pairs, timing nor error (most calls). */
const CONSOLE_NOTHING_ADDED = '\ncounters={}\npairs={}\ntiming={}\nremoteAddr=';

/**
 * The console lines from `operation=` to `eventStatus=` of the last record, kept while records
 * in a row share their operation and result code (most do): one string instead of six.
 */
let lastOperation = '';
let lastResCode = '';
let lastTail = '\noperation=\nresCode=\neventStatus=';

function consoleTail(e: Event): string {
  if (e.operation !== lastOperation || e.resCode !== lastResCode) {
    lastTail = `\noperation=${oneLine(e.operation)}\nresCode=${oneLine(e.resCode)}\neventStatus=`;
    void Number(lastTail); // flat once (see isoWithOffset)
    lastOperation = e.operation;
    lastResCode = e.resCode;
  }
  return lastTail;
}

/**
 * The console record. Built with `+`: V8 keeps the result as a tree of its parts, and the
 * output's batch (one join of a turn's records, then one Buffer) copies each record's characters
 * once, from the tree; a flat string per record (Array.join) would copy them once more, which
 * cost more than the whole encoding (issue 33). The parts that are the same for most records
 * are one string each (CONSOLE_NOTHING_ADDED, the tail).
 */
export function encodeConsole(e: Event, scope: EventScope): string {
  let out =
    CONSOLE_START +
    isoWithOffset(e.endMs) +
    '\nstartTime=' +
    isoWithOffset(e.startMs) +
    '\nelapsedNano=' +
    e.elapsedNano +
    scope.consoleTimezone +
    idsJson(e) +
    scope.consoleAppEnv +
    payloadsJson(e);
  if (
    e.error === undefined &&
    e.counters === undefined &&
    e.pairs === undefined &&
    e.timing === undefined
  )
    out += CONSOLE_NOTHING_ADDED;
  else
    out +=
      (e.error === undefined ? '\ncounters=' : `\nerror=${oneLine(e.error)}\ncounters=`) +
      jsonObject(e.counters) +
      '\npairs=' +
      jsonObject(e.pairs) +
      '\ntiming=' +
      jsonObject(e.timing) +
      '\nremoteAddr=';
  return out + oneLine(e.remoteAddr) + consoleTail(e) + e.eventStatus + '\nEOE\n';
}

export function encodeJson(e: Event, scope: EventScope): string {
  // Built as text: the app and env parts are encoded once per entry, not once per record.
  let out =
    `{"endTime":"${isoWithOffset(e.endMs)}","startTime":"${isoWithOffset(e.startMs)}","elapsedNano":${e.elapsedNano}` +
    `,"timezone":${quote(scope.timezone)},"ids":${idsJson(e)},"app":${scope.appJson},"env":${scope.envJson}` +
    `,"payloads":${payloadsJson(e)}`;
  if (e.error !== undefined) out += `,"error":${quote(e.error)}`;
  out +=
    `,"counters":${jsonObject(e.counters)},"pairs":${jsonObject(e.pairs)},"timing":${jsonObject(e.timing)}` +
    `,"remoteAddr":${quote(e.remoteAddr)},"operation":${quote(e.operation)},"resCode":${quote(e.resCode)}` +
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
