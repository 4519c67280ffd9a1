import { main } from '../../main.js';

/** What one in-process `svc` run returned and printed. */
export interface SvcRun {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs `svc <args>` in this process (main(), no child process) from the folder `cwd`, as a user
 * typing it there; the test process's working directory is restored after it.
 */
export async function svcIn(args: string[], cwd: string): Promise<SvcRun> {
  const prev = process.cwd();
  process.chdir(cwd);
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await main(
      args,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    process.chdir(prev);
  }
}
