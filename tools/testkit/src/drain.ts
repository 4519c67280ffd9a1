import { isListening } from './ports.js';
import type { Child } from './process.js';
import type { RawHttpConnection, RawResponse } from './raw-http.js';
import { waitFor } from './wait.js';

/**
 * Sends SIGTERM to an svcboot app and asks readiness during the drain: waits for the app's
 * "Shutdown begins (SIGTERM)" log line (readiness is off from then on), finishes the headers
 * of `probe` (a `GET /readyz` begun before the signal with `RawHttpConnection.begin`), then waits
 * until the listener refuses new connections. `runningWhenAnswered` says the process had not
 * exited when the answer arrived.
 */
export async function sigtermAndAskReadiness(
  child: Child,
  probe: RawHttpConnection,
  port: number,
): Promise<{ ready: RawResponse; runningWhenAnswered: boolean }> {
  child.process.kill('SIGTERM');
  // The signal is handled in the child's own time: its log line says readiness is off.
  await waitFor(
    'the app to begin its shutdown',
    () => child.stdout.includes('Shutdown begins (SIGTERM)'),
    { timeoutMs: 10_000 },
  );
  const ready = await probe.finishHeaders();
  const runningWhenAnswered = child.process.exitCode === null && child.process.signalCode === null;
  await waitFor('the listener to refuse new connections', async () => !(await isListening(port)), {
    timeoutMs: 10_000,
  });
  return { ready, runningWhenAnswered };
}
