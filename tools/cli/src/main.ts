import { parseArgs } from 'node:util';
import { DEFAULT_BIN_DIR, installCommand } from './install/command.js';
import { pbCommand } from './pb/command.js';
import { newCommand } from './scaffold/command.js';
import { deployCommand } from './deploy/command.js';
import { devCommand } from './dev/command.js';
import { addCommand } from './scaffold/add.js';
import { schemaCommand } from './schema/command.js';
import { cliError, printableError } from './errors.js';

export const USAGE = `svc: tooling for svcboot services

  svc install <tool>...   install protobuf and Go tooling into .svc/bin (svc install help)
  svc pb vendor           copy the googleapis protos and protovalidate's into third-party/googleapis
  svc pb gen              generate TypeScript from protos and write the OpenAPI documents
  svc pb build            compile protos into a descriptor set (protos.descriptorSets)
  svc pb openapi          write the OpenAPI documents of boot.yaml's grpc entries
  svc pb lint             lint protos with buf
  svc new <name>          scaffold a service (--with grpc,httpserver,kvstore,cache,relationaldb,columnardb)
  svc deploy              write a Dockerfile and Kubernetes manifests (plain and Kustomize) from boot.yaml
  svc dev                 run a service or a system's services, restarted/reloaded as you edit them
  svc add <kind>          add an entry kind or middleware to a service made by svc new (package, block, getter)
  svc schema              write the JSON Schema of boot.yaml for the installed entry kinds (--out FILE)

Run \`svc <command> --help\` for a command's flags; README.md describes them all.`;

/** Runs `svc` with `argv` (without node and the script); returns the exit code. */
export async function main(
  argv: readonly string[],
  out: (line: string) => void = (l) => console.log(l),
  err: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'install': {
        const { values, positionals } = parseArgs({
          args: [...rest],
          allowPositionals: true,
          options: {
            version: { type: 'string' },
            dir: { type: 'string', default: DEFAULT_BIN_DIR },
            'dry-run': { type: 'boolean', default: false },
            list: { type: 'boolean', default: false },
            help: { type: 'boolean', short: 'h', default: false },
          },
        });
        await installCommand({
          names: values.help ? ['help'] : positionals,
          version: values.version,
          dir: values.dir,
          dryRun: values['dry-run'],
          list: values.list,
          out,
        });
        return 0;
      }
      case 'pb':
        await pbCommand(rest, out);
        return 0;
      case 'new':
        await newCommand(rest, out);
        return 0;
      case 'deploy':
        await deployCommand(rest, out);
        return 0;
      case 'dev':
        await devCommand(rest, out, err);
        return 0;
      case 'add':
        await addCommand(rest, out);
        return 0;
      case 'schema':
        await schemaCommand(rest, out);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(USAGE);
        return 0;
      default:
        err(printableError(cliError('SVC_CLI_UNKNOWN_COMMAND', [command, USAGE])));
        return 2;
    }
  } catch (e) {
    // Plan, install, argument and project errors are all written for the user: message only.
    err(`svc ${command}: ${printableError(e)}`);
    return 1;
  }
}
