/**
 * The work of the overload benchmark's CPU-bound route and method: `ms` of the process's CPU time
 * (user + system, process.cpuUsage), as a render or a JSON transform costs instructions, not wall
 * time. A loop on the wall clock would cost less CPU on a crowded machine (the scheduler pauses
 * the process in the middle of it), and then a capacity read from the server's CPU per call
 * would overstate what it serves.
 */
export function holdCpu(ms: number): void {
  const start = process.cpuUsage();
  const us = ms * 1000;
  for (;;) {
    const d = process.cpuUsage(start);
    if (d.user + d.system >= us) return;
  }
}
