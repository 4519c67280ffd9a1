/** The CPU time (ms, user + system, every thread) the process has used so far. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Holds the thread until it has used `ms` of CPU time and `ms` of wall time have passed: a handler
 * that computes (renders, transforms) for `ms`, whatever else the machine runs. A spin on wall
 * time alone costs less CPU on a crowded machine, where the process is paused in the middle of it:
 * a test that needs calls to cost the server a known CPU time (load shedding learns it) would
 * then test something else.
 */
export function burnCpu(ms: number): void {
  const endCpu = cpuMs() + ms;
  const endWall = performance.now() + ms;
  while (cpuMs() < endCpu || performance.now() < endWall);
}
