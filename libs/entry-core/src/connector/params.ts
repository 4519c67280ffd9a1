import { coreError } from '../errors.js';

/** One `database[].params` item, `key=value`. */
export interface ConnectorParam {
  key: string;
  value: string;
  /** The item as written (trimmed), for messages. */
  item: string;
}

/**
 * The one `params` parser of the database connectors: `key=value` items, trimmed around the key
 * and the value, empty items skipped (`[""]` is an empty list). Throws an Error naming the item
 * that is not `key=value`; what a key means is the connector's to check.
 */
export function parseParams(params: readonly string[]): ConnectorParam[] {
  const out: ConnectorParam[] = [];
  for (const raw of params) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw coreError('SVC_PARAM_INVALID', [item]);
    out.push({ key: item.slice(0, eq).trim(), value: item.slice(eq + 1).trim(), item });
  }
  return out;
}
