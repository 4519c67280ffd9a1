/**
 * CPU profile of a server on demand: with PROFILE_FILE set, the first SIGUSR2 starts V8's
 * profiler, the second writes the profile (a .cpuprofile, as `node --cpu-prof` writes) to that
 * file; the start-up and warm-up stay out of it.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

export function profileOnSignal(): void {
  const file = process.env['PROFILE_FILE'];
  if (!file) return;
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: 200 }, () =>
          session.post('Profiler.start'),
        ),
      );
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(file, JSON.stringify(res.profile));
      process.stderr.write(err ? `profile: ${err.message}\n` : `profile written to ${file}\n`);
    });
  });
}
