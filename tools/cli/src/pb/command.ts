import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildDescriptorSet } from './build.js';
import { generateCode } from './gen.js';
import { writeOpenApi } from './openapi.js';
import { findProjectTool, runTool } from './tool-path.js';
import {
  DEFAULT_VENDOR_DIR,
  GOOGLEAPIS_PACKAGE,
  GOOGLEAPIS_VERSION,
  vendorGoogleapis,
} from './vendor.js';
import { cliError } from '../errors.js';

export const PB_USAGE = `svc pb vendor [--out DIR] [--version V]
    Copy google/api/{annotations,http,httpbody}.proto and google/rpc/{code,error_details,status}.proto
    from the npm package ${GOOGLEAPIS_PACKAGE} (default ${GOOGLEAPIS_VERSION}) into DIR (default ${DEFAULT_VENDOR_DIR}),
    and write protovalidate's buf/validate/validate.proto there from the descriptor @bufbuild/protovalidate embeds
    (the project's, else svc's own): protos that use validation compile with no buf.build dependency.
svc pb gen [--template buf.gen.yaml] [--runner auto|buf|protoc] [--skip-plugin NAME]... [--boot boot.yaml]
           [--openapi-out gen/openapi] [--no-openapi]
    Run buf.gen.yaml with buf (or the same plugins with protoc when buf is not installed; known remote
    plugins become their local protoc-gen-*), then write the OpenAPI documents as \`svc pb openapi\` does.
svc pb build [-o api.binpb] [--runner auto|buf|protoc]
    Compile the workspace's protos, imports included, into one binary FileDescriptorSet (buf build -o, or
    protoc --include_imports --descriptor_set_out): the file a grpc entry reads from protos.descriptorSets.
svc pb openapi [--boot boot.yaml] [--out gen/openapi]
    Write <out>/<entry>.swagger.json (OpenAPI 2.0) and <out>/<entry>.openapi.json (3.1) for each grpc
    entry of boot.yaml: the documents that entry serves at <sw.path>swagger.json and openapi.json, built
    from its protos by the project's @svcboot/entry-grpc, without starting anything.
svc pb lint
    buf lint (buf from .svc/bin, node_modules/.bin or PATH).`;

export async function pbCommand(
  argv: readonly string[],
  out: (line: string) => void,
): Promise<void> {
  const [sub, ...rest] = argv;
  const cwd = process.cwd();
  switch (sub) {
    case 'vendor': {
      const { values } = parseArgs({
        args: [...rest],
        options: {
          out: { type: 'string', default: DEFAULT_VENDOR_DIR },
          version: { type: 'string', default: GOOGLEAPIS_VERSION },
        },
      });
      const files = await vendorGoogleapis(path.resolve(cwd, values.out), values.version);
      for (const f of files) out(`wrote ${path.relative(cwd, f)}`);
      // Loaded here only: it reads @bufbuild/protobuf, which no other command needs.
      const { vendorProtovalidate } = await import('./protovalidate.js');
      const validate = await vendorProtovalidate(path.resolve(cwd, values.out), cwd);
      out(
        `wrote ${path.relative(cwd, validate.file)} (from @bufbuild/protovalidate ${validate.version}, ${validate.from === 'project' ? "the project's" : "svc's own"})`,
      );
      return;
    }
    case 'gen': {
      const { values } = parseArgs({
        args: [...rest],
        options: {
          template: { type: 'string', default: 'buf.gen.yaml' },
          runner: { type: 'string', default: 'auto' },
          boot: { type: 'string', default: 'boot.yaml' },
          'openapi-out': { type: 'string', default: path.join('gen', 'openapi') },
          'no-openapi': { type: 'boolean', default: false },
          'skip-plugin': { type: 'string', multiple: true, default: [] },
        },
      });
      const runner = values.runner;
      if (runner !== 'auto' && runner !== 'buf' && runner !== 'protoc')
        throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'runner', value: runner }]);
      const used = await generateCode({
        cwd,
        template: values.template,
        runner,
        skip: values['skip-plugin'],
        out,
      });
      out(`generated code with ${used}`);
      if (!values['no-openapi']) {
        await openApiStep(cwd, values.boot, values['openapi-out'], out);
      }
      return;
    }
    case 'build': {
      const { values } = parseArgs({
        args: [...rest],
        options: {
          output: { type: 'string', short: 'o', default: 'api.binpb' },
          runner: { type: 'string', default: 'auto' },
        },
      });
      const runner = values.runner;
      if (runner !== 'auto' && runner !== 'buf' && runner !== 'protoc')
        throw cliError('SVC_CLI_BAD_FLAG', [{ kind: 'runner', value: runner }]);
      const used = await buildDescriptorSet({ cwd, output: values.output, runner, out });
      out(
        `wrote ${values.output} with ${used}; list it under protos.descriptorSets of the grpc entry`,
      );
      return;
    }
    case 'openapi': {
      const { values } = parseArgs({
        args: [...rest],
        options: {
          boot: { type: 'string', default: 'boot.yaml' },
          out: { type: 'string', default: path.join('gen', 'openapi') },
        },
      });
      await openApiStep(cwd, values.boot, values.out, out);
      return;
    }
    case 'lint': {
      parseArgs({ args: [...rest], options: {} });
      const buf = findProjectTool('buf', cwd);
      if (!buf) throw cliError('SVC_CLI_TOOL_MISSING', [{ kind: 'buf', forLint: true }]);
      await runTool(buf, ['lint'], cwd, out);
      out('buf lint: no problems');
      return;
    }
    case undefined:
    case 'help':
    case '--help':
      out(PB_USAGE);
      return;
    default:
      throw cliError('SVC_CLI_UNKNOWN_SUBCOMMAND', [sub, PB_USAGE]);
  }
}

async function openApiStep(
  cwd: string,
  bootFile: string,
  outDir: string,
  out: (line: string) => void,
): Promise<void> {
  const files = await writeOpenApi(cwd, bootFile, outDir, (line) =>
    process.stderr.write(`warning: ${line}\n`),
  );
  if (files.length === 0) out(`no enabled grpc entry in ${bootFile}: no OpenAPI document written`);
  for (const f of files) out(`wrote ${path.relative(cwd, f)}`);
}
