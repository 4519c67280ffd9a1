import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorTable } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { CliError, cliErrors } from './errors.js';
import { detectMachine } from './install/machine.js';
import { PlanError, planTool } from './install/plan.js';
import { main, USAGE } from './main.js';
import { pbCommand } from './pb/command.js';
import { scaffold } from './scaffold/command.js';

it('README lists every error code of the catalogue, as errorTable writes it', () => {
  const readme = readFileSync(
    path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md'),
    'utf8',
  );
  expect(readme).toContain(errorTable(cliErrors));
});

/** The error `run` throws, which must be a CliError. */
async function thrown(run: () => unknown): Promise<CliError> {
  const err = await (async () => run())().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CliError);
  return err as CliError;
}

describe('svc errors carry their code', () => {
  it('an unknown command prints the catalogued message and exits 2', async () => {
    const lines: string[] = [];
    const code = await main(
      ['frobnicate'],
      () => undefined,
      (l) => lines.push(l),
    );
    expect(code).toBe(2);
    expect(lines.join('\n')).toBe(
      `svc: unknown command "frobnicate" [SVC_CLI_UNKNOWN_COMMAND]\n\n${USAGE}`,
    );
  });

  it('every printed error ends its first line with its code', async () => {
    const lines: string[] = [];
    const code = await main(
      ['pb', 'gen', '--runner', 'make'],
      () => undefined,
      (l) => lines.push(l),
    );
    expect(code).toBe(1);
    expect(lines).toEqual([
      'svc pb: --runner must be auto, buf or protoc, not "make" [SVC_CLI_BAD_FLAG]',
    ]);
  });

  it('SVC_CLI_UNKNOWN_SUBCOMMAND: svc pb with a subcommand it lacks', async () => {
    const err = await thrown(() => pbCommand(['frobnicate'], () => undefined));
    expect(err.code).toBe('SVC_CLI_UNKNOWN_SUBCOMMAND');
    expect(err.message).toMatch(/^unknown subcommand "frobnicate"\n/);
  });

  it('SVC_CLI_UNKNOWN_TOOL: svc install with a name it does not know', async () => {
    const err = await thrown(() => planTool('no-such-tool', detectMachine()));
    expect(err).toBeInstanceOf(PlanError);
    expect(err.code).toBe('SVC_CLI_UNKNOWN_TOOL');
    expect(err.message).toContain('no-such-tool');
  });

  it('SVC_CLI_NEW_REFUSED: svc new into a folder that is not empty, and with a bad name', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'svc-errors-'));
    try {
      await mkdir(path.join(parent, 'taken'));
      await writeFile(path.join(parent, 'taken', 'keep.txt'), 'mine');
      const o = {
        features: [],
        parent,
        svcbootVersion: '^0.1.0',
        tarballs: undefined,
        vendor: false,
      };
      const taken = await thrown(() => scaffold({ ...o, name: 'taken' }));
      expect(taken.code).toBe('SVC_CLI_NEW_REFUSED');
      expect(taken.message).toBe(
        `${path.join(parent, 'taken')} exists and is not empty; choose another name or --dir`,
      );
      const bad = await thrown(() => scaffold({ ...o, name: 'Bad Name' }));
      expect(bad.code).toBe('SVC_CLI_NEW_REFUSED');
      expect(readFileSync(path.join(parent, 'taken', 'keep.txt'), 'utf8')).toBe('mine');
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
