/**
 * Server-sent events (the WHATWG `text/event-stream` format) for server-streaming gateway rules:
 * what a browser's EventSource reads. One event per response message, its `data` the message's
 * JSON; a failure is a named `error` event whose data is the google.rpc.Status; comment lines keep
 * idle connections open through proxies.
 */

export const EVENT_STREAM_TYPE = 'text/event-stream';

/** How often a comment line is sent on an open event stream when nothing else is: 15 s. */
export const DEFAULT_SSE_HEARTBEAT_MS = 15_000;

/** A comment line: ignored by EventSource, keeps proxies from closing an idle connection. */
export const HEARTBEAT = ': heartbeat\n\n';

/** Headers of an event stream besides its Content-Type: no caching, no proxy buffering (nginx). */
export const EVENT_STREAM_HEADERS: readonly (readonly [string, string])[] = [
  ['Cache-Control', 'no-cache'],
  ['X-Accel-Buffering', 'no'],
];

/**
 * Whether an `Accept` header asks for an event stream: one of its media ranges is
 * `text/event-stream` (any case, parameters ignored). A browser's EventSource sends exactly that.
 */
export function acceptsEventStream(accept: string | string[] | undefined): boolean {
  if (accept === undefined) return false;
  const value = Array.isArray(accept) ? accept.join(',') : accept;
  if (value.length < EVENT_STREAM_TYPE.length) return false;
  for (const range of value.split(',')) {
    const semi = range.indexOf(';');
    const type = (semi < 0 ? range : range.slice(0, semi)).trim().toLowerCase();
    if (type === EVENT_STREAM_TYPE) return true;
  }
  return false;
}

/**
 * One event: an optional `event:` name, its `data:` line, and the blank line that dispatches it.
 * `json` is JSON.stringify output without indentation: one line (newlines inside strings are
 * escaped), so one `data:` line carries it.
 */
export function eventFrame(json: string, event?: string): string {
  return event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`;
}
