/** A reference from one entry's config to another entry by name. */
export interface EntryReference {
  kind: 'logger' | 'event' | 'cert';
  name: string;
  /** The option that holds it, e.g. `loggerEntry` or `logger.entry`. */
  field: string;
}

const FIELDS: ReadonlyArray<[string, EntryReference['kind']]> = [
  ['loggerEntry', 'logger'],
  ['eventEntry', 'event'],
  ['certEntry', 'cert'],
];

/** The references every entry kind may carry: `loggerEntry`, `eventEntry`, `certEntry`, and `logger.entry`. */
export function findReferences(config: object): EntryReference[] {
  const c = config as Record<string, unknown>;
  const refs: EntryReference[] = [];
  for (const [field, kind] of FIELDS) {
    const v = c[field];
    if (typeof v === 'string' && v !== '') refs.push({ kind, name: v, field });
  }
  const logger = c['logger'];
  if (logger !== null && typeof logger === 'object') {
    const entry = (logger as Record<string, unknown>)['entry'];
    if (typeof entry === 'string' && entry !== '')
      refs.push({ kind: 'logger', name: entry, field: 'logger.entry' });
  }
  return refs;
}
