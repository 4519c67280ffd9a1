/**
 * Readiness across workers (`app.workers` > 1): a worker's app is ready only while every worker
 * is, as the primary last said. Outside an svcboot worker this is always true, so App#isReady
 * is unchanged there.
 */
import { inSvcbootWorker } from './protocol.js';

let everyWorkerReady = !inSvcbootWorker;

/** True when every worker is ready (always true outside an svcboot worker). */
export function allWorkersReady(): boolean {
  return everyWorkerReady;
}

/** Set from the primary's `all-ready` message. */
export function setAllWorkersReady(ready: boolean): void {
  everyWorkerReady = ready || !inSvcbootWorker;
}
