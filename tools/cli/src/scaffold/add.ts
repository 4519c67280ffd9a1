export async function addCommand(
  _argv: readonly string[],
  _out: (line: string) => void,
): Promise<void> {}
