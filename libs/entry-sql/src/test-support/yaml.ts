/** A `relationaldb:` section (JSON is YAML) for one entry, enabled, on the shared server, logging to applog. */
export function relationalDbYaml(
  entry: Record<string, unknown> & { database: Array<Record<string, unknown>> },
  ...more: Array<Record<string, unknown>>
): string {
  const items = [entry, ...more].map((e) => ({
    name: 'sql',
    enabled: true,
    addr: '127.0.0.1:5432',
    loggerEntry: 'applog',
    eventEntry: 'records',
    ...e,
  }));
  return `relationaldb: ${JSON.stringify(items)}\n`;
}
