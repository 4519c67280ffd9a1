import path from 'node:path';

/** Where boot.yaml is: `--config PATH`, else `$SVC_BOOT_CONFIG`, else `./boot.yaml` under `cwd`. */
export function locateConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): { file: string; origin: string } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config' && i + 1 < argv.length)
      return { file: path.resolve(cwd, argv[i + 1]!), origin: '--config' };
    if (arg.startsWith('--config='))
      return { file: path.resolve(cwd, arg.slice('--config='.length)), origin: '--config' };
  }
  const fromEnv = env['SVC_BOOT_CONFIG'];
  if (fromEnv) return { file: path.resolve(cwd, fromEnv), origin: 'SVC_BOOT_CONFIG' };
  return { file: path.resolve(cwd, 'boot.yaml'), origin: 'default ./boot.yaml' };
}
