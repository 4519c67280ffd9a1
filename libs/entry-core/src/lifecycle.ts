import { coreError } from './errors.js';

/** Runs `step` with an AbortSignal that fires after `timeoutMs`; rejects if the step has not settled by then. */
export async function withTimeout<T>(
  what: string,
  timeoutMs: number,
  step: (ctx: { signal: AbortSignal; timeoutMs: number }) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(coreError('SVC_TIMEOUT', [what, timeoutMs]));
    }, timeoutMs);
    timer.unref?.();
  });
  try {
    return await Promise.race([step({ signal: controller.signal, timeoutMs }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
