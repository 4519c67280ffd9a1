import { CliError, cliErrors, type CliErrorCode } from '../errors.js';
import type { Machine } from './machine.js';
import {
  BUNDLES,
  findBundle,
  findTool,
  installableNames,
  type Recipe,
  type ToolSpec,
} from './tools.js';

/** Stands for the staging folder in a step's arguments until the executor makes one. */
export const STAGING = '<staging>';

/** One thing the executor does inside the staging folder (the working folder of every step). */
export type Step =
  | { kind: 'write'; file: string; text: string }
  | {
      kind: 'run';
      command: string;
      args: readonly string[];
      env?: Readonly<Record<string, string>>;
    }
  | { kind: 'extract-debs'; into: string }
  | { kind: 'check'; file: string; args: readonly string[] };

/** Where a binary comes from in the staging folder. */
export interface StagedBin {
  name: string;
  /** Relative to the staging folder. */
  from: string;
}

/** Everything needed to install one tool, decided before anything runs. */
export interface InstallPlan {
  tool: string;
  version: string;
  recipe: Recipe;
  steps: readonly Step[];
  /**
   * npm recipes keep the whole staging folder (the package and its dependencies) as
   * `<dir>/<keepAs>` and link the bins to it; other recipes move the bins and drop the rest.
   */
  keepAs: string | undefined;
  bins: readonly StagedBin[];
  notes: readonly string[];
}

export interface PlanOptions {
  /** Overrides the table's version (single tools only). */
  version?: string | undefined;
}

/** An install that cannot be planned here; `code` says why (see README.md, "Errors"). */
export class PlanError extends CliError {
  override name = 'PlanError';
}

function recipeRunnable(recipe: Recipe, m: Machine): boolean {
  switch (recipe.kind) {
    case 'npm':
      return m.npm !== undefined;
    case 'go':
      return m.go !== undefined;
    case 'deb':
      return m.aptGet !== undefined && m.dpkgDeb !== undefined;
  }
}

function describeNeed(recipe: Recipe, version: string): string {
  switch (recipe.kind) {
    case 'npm':
      return `npm (to install the npm package ${recipe.package}@${version})`;
    case 'go':
      return `a Go toolchain, \`go\` (for \`go install ${recipe.module}@v${version}\`)`;
    case 'deb':
      return `Debian's apt-get and dpkg-deb (for the package ${recipe.package})`;
  }
}

function howToGet(recipe: Recipe): string {
  switch (recipe.kind) {
    case 'npm':
      return 'install Node.js with npm';
    case 'go':
      return 'install Go from https://go.dev/dl/ (or `apt-get install golang-go`, whose Go may be older than this module needs) and put its bin folder on PATH';
    case 'deb':
      return 'run on Debian or Ubuntu';
  }
}

function stepsFor(
  tool: ToolSpec,
  recipe: Recipe,
  version: string,
  m: Machine,
): { steps: Step[]; keepAs: string | undefined; bins: StagedBin[]; notes: string[] } {
  const notes: string[] = [];
  const checkArgs = tool.versionArgs;
  switch (recipe.kind) {
    case 'npm': {
      const pkg = {
        name: `svc-tool-${tool.name}`,
        private: true,
        dependencies: { [recipe.package]: version },
      };
      const bins = tool.bins.map((name) => ({ name, from: `node_modules/.bin/${name}` }));
      const steps: Step[] = [
        { kind: 'write', file: 'package.json', text: `${JSON.stringify(pkg, null, 2)}\n` },
        {
          kind: 'run',
          command: m.npm!,
          args: ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
        },
      ];
      if (checkArgs) steps.push({ kind: 'check', file: bins[0]!.from, args: checkArgs });
      return { steps, keepAs: `.tools/${tool.name}@${version}`, bins, notes };
    }
    case 'go': {
      const bins = tool.bins.map((name) => ({ name, from: `bin/${name}` }));
      const steps: Step[] = [
        {
          kind: 'run',
          command: m.go!,
          args: ['install', `${recipe.module}@v${version}`],
          env: { GOBIN: `${STAGING}/bin` },
        },
      ];
      if (checkArgs) steps.push({ kind: 'check', file: bins[0]!.from, args: checkArgs });
      return { steps, keepAs: undefined, bins, notes };
    }
    case 'deb': {
      const bins = tool.bins.map((name) => ({ name, from: `root/usr/bin/${name}` }));
      notes.push(
        `Debian's version of ${recipe.package} is installed, not the pinned ${tool.version} (pass --version with a Debian version to choose one)`,
      );
      const spec = version === tool.version ? recipe.package : `${recipe.package}=${version}`;
      const steps: Step[] = [
        { kind: 'run', command: m.aptGet!, args: ['download', spec] },
        { kind: 'extract-debs', into: 'root' },
      ];
      return { steps, keepAs: undefined, bins, notes };
    }
  }
}

/**
 * Chooses the first recipe of `toolName` this machine can run and spells out its steps.
 * Pure: the machine is given, nothing is read or run. Throws PlanError naming what is missing.
 */
export function planTool(
  toolName: string,
  machine: Machine,
  options: PlanOptions = {},
): InstallPlan {
  const tool = findTool(toolName);
  if (!tool) throw unknownTool(toolName);
  const version = options.version ?? tool.version;
  const recipe = tool.recipes.find((r) => recipeRunnable(r, machine));
  if (!recipe) {
    const needs = tool.recipes.map((r) => describeNeed(r, version));
    const ways = [...new Set(tool.recipes.map(howToGet))];
    throw planError('SVC_CLI_CANNOT_INSTALL', [{ kind: 'tool', tool: tool.name, needs, ways }]);
  }
  const { steps, keepAs, bins, notes } = stepsFor(tool, recipe, version, machine);
  return { tool: tool.name, version, recipe, steps, keepAs, bins, notes };
}

/**
 * Plans a tool or a bundle. A bundle is planned whole before anything is installed: if one of
 * its tools cannot be installed here, nothing is, and the error lists every such tool.
 */
export function planInstall(
  name: string,
  machine: Machine,
  options: PlanOptions = {},
): InstallPlan[] {
  const bundle = findBundle(name);
  if (!bundle) return [planTool(name, machine, options)];
  if (options.version)
    throw planError('SVC_CLI_BAD_FLAG', [{ kind: 'versionWithBundle', bundle: bundle.name }]);
  const plans: InstallPlan[] = [];
  const errors: string[] = [];
  for (const t of bundle.tools) {
    try {
      plans.push(planTool(t, machine));
    } catch (err) {
      if (!(err instanceof PlanError)) throw err;
      errors.push(err.message);
    }
  }
  if (errors.length > 0) {
    throw planError('SVC_CLI_CANNOT_INSTALL', [
      { kind: 'bundle', bundle: bundle.name, reasons: errors },
    ]);
  }
  return plans;
}

function unknownTool(name: string): PlanError {
  const names = installableNames();
  const near = names.filter((n) => n.includes(name) || name.includes(n));
  return planError('SVC_CLI_UNKNOWN_TOOL', [
    name,
    near,
    names.length - 1,
    BUNDLES.map((b) => b.name),
  ]);
}

/** A catalogued error, as a PlanError (what planning throws). */
function planError<K extends CliErrorCode>(
  code: K,
  args: Parameters<(typeof cliErrors)[K]['message']>,
): PlanError {
  const message = (cliErrors[code].message as (...a: unknown[]) => string)(...(args as unknown[]));
  return new PlanError(code, message);
}

/** The plan as the shell commands a person would type (STAGING stays symbolic). */
export function describePlan(plan: InstallPlan, dir: string): string[] {
  const lines: string[] = [
    `# ${plan.tool} ${plan.version} via ${plan.recipe.kind}`,
    `mkdir ${STAGING}   # a new folder inside ${dir}`,
  ];
  for (const note of plan.notes) lines.push(`# note: ${note}`);
  for (const s of plan.steps) {
    switch (s.kind) {
      case 'write':
        lines.push(`cat > ${STAGING}/${s.file} <<'EOF'\n${s.text}EOF`);
        break;
      case 'run': {
        const env = Object.entries(s.env ?? {})
          .map(([k, v]) => `${k}=${v} `)
          .join('');
        lines.push(`(cd ${STAGING} && ${env}${[s.command, ...s.args].map(quote).join(' ')})`);
        break;
      }
      case 'extract-debs':
        lines.push(`for deb in ${STAGING}/*.deb; do dpkg-deb -x "$deb" ${STAGING}/${s.into}; done`);
        break;
      case 'check':
        lines.push(`${STAGING}/${s.file} ${s.args.map(quote).join(' ')}`);
        break;
    }
  }
  if (plan.keepAs) {
    lines.push(`mv ${STAGING} ${dir}/${plan.keepAs}`);
    for (const b of plan.bins) lines.push(`ln -sfn ${plan.keepAs}/${b.from} ${dir}/${b.name}`);
  } else {
    for (const b of plan.bins) lines.push(`mv ${STAGING}/${b.from} ${dir}/${b.name}`);
    lines.push(`rm -rf ${STAGING}`);
  }
  return lines;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./<>-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
