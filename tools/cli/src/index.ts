export { main, USAGE } from './main.js';
export {
  TOOLS,
  BUNDLES,
  findTool,
  findBundle,
  type ToolSpec,
  type BundleSpec,
  type Recipe,
  type RecipeKind,
} from './install/tools.js';
export { detectMachine, findOnPath, type Machine } from './install/machine.js';
export {
  planTool,
  planInstall,
  describePlan,
  PlanError,
  STAGING,
  type InstallPlan,
  type Step,
  type StagedBin,
} from './install/plan.js';
export { executePlan, InstallError, type InstallResult } from './install/execute.js';
export { CliError, cliErrors, type CliErrorCode } from './errors.js';
