/** svcboot's load-shedding counter, read from a server's /metrics (the bench's servers serve it on their port). */

/** `svc_shed_total` by reason, summed over the server's entries. */
export async function shedReasons(port: number): Promise<Record<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics on port ${port}: HTTP ${res.status}`);
  const by: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    if (!line.startsWith('svc_shed_total{')) continue;
    const reason = /reason="([^"]*)"/.exec(line)?.[1] ?? '?';
    by[reason] = (by[reason] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return by;
}

/** The reasons whose count grew from `before` to `after`, by how much. */
export function shedSince(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after))
    if (v > (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
  return out;
}
